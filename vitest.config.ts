import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { longestFirstSequencer } from './test/sequencer.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The HTTP suite shared by both runtimes (routes, auth, scopes, downloads, links, bad inputs,
 * retention): on Node over SQLite + fs, and in workerd over D1 + R2, where test/helpers/drivers.ts
 * is swapped for drivers.workerd.ts. The files are the same; only the drivers differ.
 */
const SHARED_HTTP_SUITE = [
  'test/http-auth.test.ts',
  'test/http-routes.test.ts',
  'test/http-scope.test.ts',
  'test/http-download.test.ts',
  'test/http-links.test.ts',
  'test/http-retention.test.ts',
  'test/http-names.test.ts',
  'test/http-sessions.test.ts',
  'test/http-views.test.ts',
];

/**
 * Node files that must have the machine to themselves: project `node-alone` runs them one at a time,
 * after the others. Every other Node file shares nothing with the files beside it or before it in its
 * worker (its own ports, temp folders, S3 buckets and XDG_STATE_HOME) and runs in parallel.
 */
const ALONE = [
  // 'with pause' holds the event loop 15 ms per batch and expects every batch to take under
  // batchTargetMs (25 ms): on a busy core the process is preempted mid-batch, and the batch halves.
  // (The rest of retention's tests, in retention.test.ts, run with the others.)
  'test/retention-pacing.test.ts',
  // Compares timings inside one service: 20 small reads must all answer before a PDF that takes
  // seconds, and reads must keep answering while a hostile search runs.
  'test/views-hostile.test.ts',
  // Compares the event loop's longest stall with a job's time, and a large document's job must
  // finish within the sandbox's 20 s limit.
  'test/view-sandbox.test.ts',
  // Real-clock token buckets of 5 requests a second: the SDK's first call must find the bucket still
  // empty, so a step slower than 200 ms (a busy core) refills it and the call goes through.
  'test/rate-limit.test.ts',
  // Writes and fsyncs 6 GiB through the service, then reads it back: beside other files, that disk
  // traffic slowed the replicas' Postgres commits past their pool wait.
  'test/big-file.test.ts',
];

/**
 * The heavy Postgres files (three `serve` replicas, Postgres killed and restarted, thousands of puts
 * and a retention run killed midway): they run in the node-postgres project's group, after the
 * parallel Node files, where their load made a memory check of views-large.test.ts fail.
 */
const POSTGRES_HEAVY = ['test/replicas.test.ts', 'test/postgres-repository.test.ts'];

/**
 * What `npm run test:quick` (`vitest run --mode quick`) leaves out, for the inner loop: the slowest
 * process-level files. `npm test` and CI run everything.
 */
const SLOW = [
  // npm: packs both packages and installs them three ways.
  'test/package.test.ts',
  // Every step a CLI process, against `serve` processes.
  'test/cli-client.test.ts',
  'test/cli-choice.test.ts',
  'test/docs-troubleshooting.test.ts',
  // `serve` and the backup and restore commands as processes, against S3.
  'test/backup.test.ts',
  // Each example as a process.
  'test/examples.test.ts',
  // The gateway as a process in front of real MCP servers; the conformance suite; the inspector CLI.
  'test/gateway-stdio.test.ts',
  'test/mcp-conformance.test.ts',
  'test/mcp-inspector.test.ts',
  // The Python client's pytest suite against a `serve` process.
  'test/python-client.test.ts',
  // Chromium.
  'test/ui-browser.test.ts',
  'test/ui-names.test.ts',
  'test/ui-resources.test.ts',
  'test/ui-screenshot.test.ts',
  'test/gateway-playwright.test.ts',
  'test/gateway-readback.test.ts',
  'test/tus-browser.test.ts',
  // tus-js-client against `serve` processes killed and restarted; `put --resume` CLI processes killed.
  'test/tus.test.ts',
  'test/tus-client.test.ts',
  'test/multipart-uploads.test.ts',
  // A 6 GiB file through the CLI, tus and a proxy that drops the connection.
  'test/big-file.test.ts',
  // Service processes killed at each phase boundary or at random moments; a private Ceph RGW killed
  // and restarted.
  'test/crash.test.ts',
  'test/fault-kill.test.ts',
  'test/fault-s3.test.ts',
  // A 1 GiB log written, uploaded and searched.
  'test/views-large.test.ts',
  // `wrangler dev`.
  'test/dev-worker.test.ts',
];

/**
 * The Node files that take longest, longest first (a run of the suite on an idle two-core machine,
 * 2026-12-02): they start before the others (test/sequencer.ts), so that none of them is left
 * running alone at the end.
 */
const LONGEST_FIRST = [
  'replicas.test.ts',
  'backup.test.ts',
  'docs.test.ts',
  'cli-client.test.ts',
  'cli-choice.test.ts',
  'tenant-isolation.test.ts',
  'package.test.ts',
  'd1-repository.test.ts',
  'gateway-stdio.test.ts',
  'python-client.test.ts',
  'docs-troubleshooting.test.ts',
  'examples.test.ts',
  'adk-differential.test.ts',
  'layers.test.ts',
  'blob-store-r2.test.ts',
  'ui-browser.test.ts',
];

/**
 * Files run at once on Node. Many spend most of their time waiting on child processes, servers,
 * sockets, timers, Chromium or pytest, so a two-core machine runs more files than it has cores.
 */
const NODE_WORKERS = availableParallelism() + 1;

const TIMEOUTS = { testTimeout: 60_000, hookTimeout: 60_000 };

export default defineConfig(({ mode }) => {
  const skipped = mode === 'quick' ? SLOW : [];
  const nodeProject = {
    environment: 'node',
    // Whatever a test file started and did not stop is stopped after the file.
    setupFiles: ['test/setup-processes.ts'],
    ...TIMEOUTS,
  };
  return {
    test: {
      // Once for the whole run, whatever projects it runs (the projects below do not extend this
      // config, or each would run them again): a real S3 (env, MinIO or Ceph RGW) for the S3 driver's
      // tests, which the tests of every project can inject; src/ compiled for the CLI, `serve` and
      // gateway processes that tests start (test/helpers/compiled-src.ts: no tsx loader in each); and
      // the process check, first so that its teardown runs last, after S3 is stopped: it fails the run
      // if a test left a process behind.
      globalSetup: [
        'test/global-setup-processes.ts',
        'test/global-setup-compile.ts',
        'test/global-setup-s3.ts',
        'test/global-setup-postgres.ts',
      ],
      sequence: { sequencer: longestFirstSequencer(LONGEST_FIRST) },
      projects: [
        {
          test: {
            ...nodeProject,
            name: 'node',
            include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
            exclude: ['test/workerd/**', ...ALONE, ...POSTGRES_HEAVY, ...skipped],
            maxWorkers: NODE_WORKERS,
            // A worker process runs file after file with the modules it already loaded: loading the
            // service's modules anew for each file took a third of a run's CPU. Each file still gets
            // its own setup (test/setup-processes.ts: its own XDG_STATE_HOME, its processes stopped).
            isolate: false,
            sequence: { groupOrder: 0 },
          },
        },
        {
          // The shared HTTP suite and the randomized tenant-isolation workload again, on Postgres (a
          // database per app on the run's server): test/helpers/drivers.ts is swapped for
          // drivers.postgres.ts. And the heavy Postgres files, which use no test app.
          resolve: {
            alias: [{ find: /^\.\/drivers\.js$/, replacement: here('./test/helpers/drivers.postgres.ts') }],
          },
          test: {
            ...nodeProject,
            name: 'node-postgres',
            include: [...SHARED_HTTP_SUITE, 'test/tenant-isolation.test.ts', ...POSTGRES_HEAVY].filter(
              (file) => !skipped.includes(file),
            ),
            maxWorkers: NODE_WORKERS,
            isolate: false,
            // A group of its own, after the parallel Node files and the workerd project: beside the
            // Node files, the two projects' workers together oversubscribed the cores (a views test
            // timed out), and vitest runs projects side by side only with the same number of workers.
            sequence: { groupOrder: 2 },
          },
        },
        {
          test: {
            ...nodeProject,
            name: 'node-alone',
            include: ALONE.filter((file) => !skipped.includes(file)),
            maxWorkers: 1,
            sequence: { groupOrder: 3 },
          },
        },
        {
          plugins: [
            cloudflareTest(async () => ({
              wrangler: { configPath: here('./wrangler.toml') },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: await readD1Migrations(here('./migrations')),
                  // What `wrangler secret put` sets in production.
                  ARTIFACT_STORE_JWT_SECRETS: 'k1:k1-secret-for-tests-0123456789abcdef',
                  ARTIFACT_STORE_LOG_LEVEL: 'warn',
                },
                // A small limit for test/workerd/rate-limit.test.ts, which binds it in place of wrangler.toml's.
                ratelimits: { TEST_RATE_LIMITER: { simple: { limit: 3, period: 10 } } },
              },
            })),
          ],
          resolve: {
            alias: [{ find: /^\.\/drivers\.js$/, replacement: here('./test/helpers/drivers.workerd.ts') }],
          },
          test: {
            ...TIMEOUTS,
            name: 'workerd',
            include: [...SHARED_HTTP_SUITE, 'test/workerd/**/*.test.ts'],
            setupFiles: ['test/workerd/apply-migrations.ts'],
            // One D1 database for the project: files take turns (each test app empties it and keeps
            // its blobs under a prefix of its own), in a group of their own after the parallel Node
            // files (vitest runs projects side by side only when they run as many files at once). In
            // one Miniflare for them all: started anew for each file, it and the migrations took four
            // times as long as the tests.
            fileParallelism: false,
            isolate: false,
            sequence: { groupOrder: 1 },
          },
        },
      ],
    },
  };
});
