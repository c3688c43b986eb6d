/**
 * Every object under a prefix of an S3 bucket: the one ListObjectsV2 pager, read by the S3 driver
 * and the S3 backup target.
 */
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { paginate } from './blob-keys.js';

/** An object of a listing. */
export interface ListedObject {
  key: string;
  sizeBytes: number;
  /** Last modified, ms since the epoch; absent when the backend did not say (S3 always does). */
  modifiedAt?: number;
}

export interface ListAllOptions {
  bucket: string;
  prefix: string;
  /** Keys per ListObjectsV2 request (default and S3's maximum: 1000). */
  pageSize?: number;
  /** What a failed request throws instead of the SDK's error (which it should keep as its cause). */
  fail: (err: unknown) => unknown;
}

/**
 * Every object under a prefix of an S3 bucket, in key order: ListObjectsV2, page after page by
 * continuation token. Objects may be deleted while it runs (the next page starts after the last key
 * listed).
 */
export function listAll(client: S3Client, options: ListAllOptions): AsyncGenerator<ListedObject, void, undefined> {
  const { bucket, prefix, pageSize, fail } = options;
  return paginate<ListedObject, string>(async (token) => {
    let page;
    try {
      page = await client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix,
          ContinuationToken: token,
          ...(pageSize ? { MaxKeys: pageSize } : {}),
        }),
      );
    } catch (err) {
      throw fail(err);
    }
    const items: ListedObject[] = [];
    for (const o of page.Contents ?? []) {
      if (!o.Key) continue;
      items.push({
        key: o.Key,
        sizeBytes: o.Size ?? 0,
        ...(o.LastModified ? { modifiedAt: o.LastModified.getTime() } : {}),
      });
    }
    return { items, next: page.IsTruncated ? page.NextContinuationToken || undefined : undefined };
  });
}
