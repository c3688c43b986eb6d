import type { TestProject } from 'vitest/node';
import { startPostgresTarget, type PostgresTargetInfo } from './helpers/postgres-target.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's Postgres, or null when none could be had (then postgresUnavailable says why). */
    postgres: PostgresTargetInfo | null;
    postgresUnavailable: string | null;
  }
}

/** One Postgres for the whole run (test/helpers/postgres-target.ts picks it); each test file makes its own databases on it. */
export default async function setup(project: TestProject) {
  if (project.vitest.projects.every((p) => p.name === 'workerd')) {
    project.provide('postgres', null);
    project.provide('postgresUnavailable', 'this run has no Node project');
    return;
  }
  const started = performance.now();
  const target = await startPostgresTarget();
  if ('unavailable' in target) {
    console.warn(`Postgres tests: ${target.unavailable}`);
    project.provide('postgres', null);
    project.provide('postgresUnavailable', target.unavailable);
    return;
  }
  console.log(`Postgres tests: ${target.info.name}, ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  project.provide('postgres', target.info);
  project.provide('postgresUnavailable', null);
  return () => target.stop();
}
