/**
 * The service's middleware as steps: each module in this folder makes one `RequestStep`, and a list of
 * steps runs either as one Hono middleware (`chain`, for every route) or around one handler
 * (`runSteps`, for the direct download route in ../direct-route.ts). Both run the same steps in the same
 * order, so a step added to a list applies to both.
 *
 * Why steps rather than one Hono middleware per module: each level of Hono's compose is an async
 * dispatch and a promise, and on a small GET a level costs more than the work of most steps. A step
 * is two plain calls, and `enter` returns a promise only when it has something to wait for.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';

/** One piece of the work around every request's handler. */
export interface RequestStep {
  /** The module's name, as the tests and the direct route's proof list it. */
  readonly name: string;
  /**
   * Before the handler, in list order. Throwing refuses the request: the error becomes its answer
   * (error-mapping.ts), the handler and the later steps do not run. Returns a promise only when it
   * must wait (the caller awaits nothing otherwise).
   */
  enter(c: Context<AppEnv>): void | Promise<void>;
  /**
   * After the answer is made (also an error answer), in reverse list order, for the steps whose
   * `enter` returned normally. Sees `c.res`; must not throw.
   */
  leave?(c: Context<AppEnv>): void;
}

/** Turns an error into the answer the client gets (error-mapping.ts). */
export type ErrorAnswer = (err: Error, c: Context<AppEnv>) => Response;

/**
 * Runs `steps` around `handler`: each step's enter, the handler, then the leaves of the steps that
 * entered, last first. An Error thrown by a step or the handler becomes the answer through `onError`
 * (as Hono's compose does for a handler); anything else propagates. The answer is left in `c.res`.
 */
export async function runSteps(
  c: Context<AppEnv>,
  steps: readonly RequestStep[],
  handler: (c: Context<AppEnv>) => Promise<Response | undefined> | Response | undefined,
  onError: ErrorAnswer,
): Promise<Response> {
  let entered = 0;
  try {
    for (; entered < steps.length; entered++) {
      const waiting = steps[entered]!.enter(c);
      if (waiting !== undefined) await waiting;
    }
    const res = await handler(c);
    if (res) c.res = res;
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    c.error = err;
    c.res = onError(err, c);
  }
  for (let i = entered - 1; i >= 0; i--) steps[i]!.leave?.(c);
  return c.res;
}

/** The steps as one Hono middleware: one level of compose however many steps there are. */
export function chain(steps: readonly RequestStep[], onError: ErrorAnswer): MiddlewareHandler<AppEnv> {
  return async function steppedMiddleware(c, next) {
    await runSteps(
      c,
      steps,
      async () => {
        await next();
        return undefined;
      },
      onError,
    );
  };
}
