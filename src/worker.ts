/**
 * The Cloudflare Workers entry: the same Hono app as `npm start`, on D1 (metadata) and R2 (bytes).
 * Only Workers-safe modules are imported from here: the Node drivers (better-sqlite3, fs, node:crypto
 * streams) stay in src/node/ and out of this bundle (scripts/worker-size.ts checks). The Worker's
 * startup machinery lives in src/worker/.
 *
 *   fetch      the HTTP API, exactly as on Node (minus /mcp, /metrics and /docs: see docs/workers.md)
 *   scheduled  the cron trigger of wrangler.toml: one retention run, the same function as
 *              `artifact-store retention run` and POST /v1/admin/retention
 */
import { createWorkerApp, type WorkerApp } from './worker/app.js';
import type { WorkerEnv } from './worker/config.js';

export { createWorkerApp, type WorkerApp, type WorkerOverrides } from './worker/app.js';
export type { WorkerEnv } from './worker/config.js';

interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void;
}

interface ScheduledControllerLike {
  readonly cron: string;
  readonly scheduledTime: number;
}

// One service per isolate, rebuilt if the runtime hands over a different env.
let current: { env: WorkerEnv; app: Promise<WorkerApp> } | undefined;
function appFor(env: WorkerEnv): Promise<WorkerApp> {
  if (current?.env !== env) {
    const app = createWorkerApp(env);
    current = { env, app };
    // A bad configuration is reported on every request until it is fixed, not cached forever.
    app.catch(() => {
      if (current?.app === app) current = undefined;
    });
  }
  return current.app;
}

/** The details go to the Worker's logs (`wrangler tail`), not to whoever asked. */
function misconfigured(err: unknown): Response {
  console.error(err instanceof Error ? err.message : String(err));
  return Response.json(
    {
      code: 'backend_unavailable',
      message: "The service is misconfigured; its operator can see why in the Worker's logs (wrangler tail).",
    },
    { status: 503 },
  );
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContextLike): Promise<Response> {
    let w: WorkerApp;
    try {
      w = await appFor(env);
    } catch (err) {
      return misconfigured(err);
    }
    const response = await w.app.fetch(request, env, ctx as never);
    ctx.waitUntil(w.service.flush());
    return response;
  },

  async scheduled(controller: ScheduledControllerLike, env: WorkerEnv, ctx: ExecutionContextLike): Promise<void> {
    const w = await appFor(env);
    const run = w
      .recordPolicies()
      .then(() => w.retention(`cron ${controller.cron}`))
      .then(
        (report) => w.logger.info('retention run', { ...report }),
        (err: unknown) => {
          w.logger.error('retention run failed', { error: err instanceof Error ? err.message : String(err) });
          throw err;
        },
      );
    ctx.waitUntil(run);
    await run;
  },
};
