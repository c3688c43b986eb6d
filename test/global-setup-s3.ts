import type { TestProject } from 'vitest/node';
import { startS3Target, type S3TargetInfo } from './helpers/s3-target.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's S3 server, or null when none could be had (then s3Unavailable says why). */
    s3: S3TargetInfo | null;
    s3Unavailable: string | null;
  }
}

/**
 * One real S3 server for the whole run (test/helpers/s3-target.ts picks it), stopped at the end.
 * vitest.config.ts runs this once, for every project (`project` is the root one, whose provided
 * values every project sees).
 */
export default async function setup(project: TestProject) {
  // The S3 tests are all on Node: a run of the workerd project alone needs no server.
  if (project.vitest.projects.every((p) => p.name === 'workerd')) {
    project.provide('s3', null);
    project.provide('s3Unavailable', 'this run has no Node project');
    return;
  }
  const started = performance.now();
  const target = await startS3Target();
  if ('unavailable' in target) {
    console.warn(`S3 tests: ${target.unavailable}`);
    project.provide('s3', null);
    project.provide('s3Unavailable', target.unavailable);
    return;
  }
  console.log(
    `S3 tests: ${target.info.name} at ${target.info.endpoint}, ready in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  project.provide('s3', target.info);
  project.provide('s3Unavailable', null);
  return () => target.stop();
}
