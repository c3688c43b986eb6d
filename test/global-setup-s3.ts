import type { TestProject } from 'vitest/node';
import { startS3Target, type S3TargetInfo } from './helpers/s3-target.js';

declare module 'vitest' {
  export interface ProvidedContext {
    s3: S3TargetInfo | null;
    s3Unavailable: string | null;
  }
}

/** One real S3 server for the whole run (starting RGW takes ~15 s), stopped at the end. */
export default async function setup(project: TestProject) {
  const target = await startS3Target();
  if ('unavailable' in target) {
    project.provide('s3', null);
    project.provide('s3Unavailable', target.unavailable);
    return;
  }
  project.provide('s3', target.info);
  project.provide('s3Unavailable', null);
  return () => target.stop();
}
