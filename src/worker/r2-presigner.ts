/** Presigned URLs through R2's S3 API, when its credentials are set: `direct` links and direct uploads. */
import { S3Client } from '@aws-sdk/client-s3';
import { s3Presigner } from '../blob/s3-presign.js';
import type { WorkerEnv } from './config.js';

export function r2Presigner(env: WorkerEnv) {
  const {
    R2_BUCKET_NAME: bucket,
    R2_ACCOUNT_ID: account,
    R2_ACCESS_KEY_ID: accessKeyId,
    R2_SECRET_ACCESS_KEY: secretAccessKey,
  } = env;
  const endpoint = env.R2_S3_ENDPOINT || (account ? `https://${account}.r2.cloudflarestorage.com` : undefined);
  const parts = [bucket, endpoint, accessKeyId, secretAccessKey];
  if (parts.every((p) => !p)) return undefined;
  if (!parts.every(Boolean))
    throw new Error(
      'Invalid configuration: R2 presigning needs R2_BUCKET_NAME, R2_ACCOUNT_ID (or R2_S3_ENDPOINT), R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY together.',
    );
  const client = new S3Client({
    region: 'auto',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: accessKeyId!, secretAccessKey: secretAccessKey! },
  });
  return s3Presigner(client, bucket!);
}
