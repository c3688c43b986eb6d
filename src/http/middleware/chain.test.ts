import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errors } from '../../core/errors.js';
import type { AppEnv } from '../context.js';
import { chain, type RequestStep, runSteps } from './chain.js';
import { errorMapping } from './error-mapping.js';
import { silentLogger } from '../../core/logger.js';

const onError = errorMapping({ logger: silentLogger });

/** A step that records its enter and leave in `trace`, optionally waiting or throwing on enter. */
function recording(name: string, trace: string[], o: { wait?: boolean; fail?: boolean } = {}): RequestStep {
  return {
    name,
    enter() {
      trace.push(`enter ${name}`);
      if (o.fail) throw errors.forbidden(`${name} refused`);
      if (o.wait) return new Promise<void>((resolve) => setTimeout(resolve, 1));
    },
    leave(c) {
      trace.push(`leave ${name} ${c.res.status}`);
    },
  };
}

/** The same steps both ways: as the app's middleware, and around one handler (the direct route). */
function apps(steps: RequestStep[], handler: () => Response | Promise<Response>) {
  const routed = new Hono<AppEnv>();
  routed.use('*', chain(steps, onError));
  routed.get('/x', handler);
  routed.onError(onError);
  const direct = new Hono<AppEnv>();
  direct.get('/x', (c) => runSteps(c, steps, handler, onError));
  return { routed, direct };
}

describe('request steps', () => {
  for (const way of ['routed', 'direct'] as const) {
    describe(way, () => {
      it('enter in order, then the handler, then leave last first', async () => {
        const trace: string[] = [];
        const app = apps([recording('a', trace), recording('b', trace, { wait: true }), recording('c', trace)], () => {
          trace.push('handler');
          return new Response('ok');
        })[way];
        const res = await app.request('/x');
        expect(await res.text()).toBe('ok');
        expect(trace).toEqual([
          'enter a',
          'enter b',
          'enter c',
          'handler',
          'leave c 200',
          'leave b 200',
          'leave a 200',
        ]);
      });

      it('a step that refuses answers the error; only the steps before it leave', async () => {
        const trace: string[] = [];
        const app = apps([recording('a', trace), recording('b', trace, { fail: true }), recording('c', trace)], () => {
          trace.push('handler');
          return new Response('ok');
        })[way];
        const res = await app.request('/x');
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ code: 'forbidden', message: 'b refused' });
        expect(trace).toEqual(['enter a', 'enter b', 'leave a 403']);
      });

      it("a handler's error is the answer, and every step still leaves", async () => {
        const trace: string[] = [];
        const app = apps([recording('a', trace), recording('b', trace)], () => {
          throw errors.notFound('art_x');
        })[way];
        const res = await app.request('/x');
        expect(res.status).toBe(404);
        expect(trace).toEqual(['enter a', 'enter b', 'leave b 404', 'leave a 404']);
      });
    });
  }

  it('a throw that is not an Error propagates, as from Hono middleware', async () => {
    const app = new Hono<AppEnv>();
    const steps: RequestStep[] = [
      {
        name: 'odd',
        enter() {
          throw 'not an error';
        },
      },
    ];
    app.get('/x', (c) => runSteps(c, steps, () => new Response('ok'), onError));
    await expect(app.fetch(new Request('http://h/x'))).rejects.toBe('not an error');
  });
});
