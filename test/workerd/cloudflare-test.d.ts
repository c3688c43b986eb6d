/**
 * The part of `cloudflare:test` (@cloudflare/vitest-pool-workers) the workerd tests use, so the Node
 * type check needs no Workers global types. `env` is typed in bindings.ts.
 */
declare module 'cloudflare:test' {
  interface D1Migration {
    name: string;
    queries: string[];
  }
  interface ExecutionContext {
    waitUntil(promise: Promise<unknown>): void;
    passThroughOnException(): void;
  }
  interface ScheduledController {
    readonly scheduledTime: number;
    readonly cron: string;
    noRetry(): void;
  }

  export const env: unknown;
  export function applyD1Migrations(
    db: unknown,
    migrations: D1Migration[],
    migrationsTableName?: string,
  ): Promise<void>;
  export function createExecutionContext(): ExecutionContext;
  export function waitOnExecutionContext(ctx: ExecutionContext): Promise<void>;
  export function createScheduledController(options?: {
    scheduledTime?: Date | number;
    cron?: string;
  }): ScheduledController;
}
