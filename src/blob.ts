/**
 * artifact-store/blob: the blob drivers, where the bytes live. Each takes its options and returns a
 * `BlobStore` that `composeApp` (artifact-store) takes as `Drivers.blobs`.
 */
export type { BlobInfo, BlobPutOptions, BlobReader, BlobStore, PresignGetOptions } from './blob/blob-store.js';
export { createFsBlobStore, type FsBlobStoreOptions } from './blob/fs.js';
export { createMemoryBlobStore, type MemoryBlobStoreOptions } from './blob/memory.js';
export { createS3BlobStore, type S3BlobStoreOptions } from './blob/s3.js';
export { createS3Client, type S3ConnectionOptions } from './blob/s3-client.js';
export type { CdnSigning } from './blob/s3-cdn.js';
export { createR2BlobStore, type R2BlobStoreOptions, type R2BucketLike } from './blob/r2.js';
