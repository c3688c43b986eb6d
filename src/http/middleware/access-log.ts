/**
 * The access log and the request metrics: one `request` line per answer (method, path, status,
 * duration, tenant) and the request counter and duration histogram, by route.
 */
import { routePath } from 'hono/route';
import type { Logger } from '../../core/logger.js';
import type { Metrics } from '../metrics.js';
import type { RequestStep } from './chain.js';

export interface AccessLogOptions {
  logger: Logger;
  /** Prometheus metrics: counted by route pattern (`unmatched` for requests no route took). */
  metrics?: Metrics;
}

/**
 * Logs and counts each request once its answer is made. Nothing at all when the logger drops info
 * lines and there are no metrics: then the step is not in the chain (undefined).
 */
export function accessLog({ logger, metrics }: AccessLogOptions): RequestStep | undefined {
  const logRequests = logger.isEnabled?.('info') ?? true;
  if (!logRequests && !metrics) return undefined;
  // A logger that holds lines formats them after this turn's answers are written.
  const log = logger.infoLater ? logger.infoLater.bind(logger) : logger.info.bind(logger);
  return {
    name: 'access-log',
    enter(c) {
      c.set('startedAt', performance.now());
    },
    leave(c) {
      const started = c.get('startedAt')!;
      if (metrics) {
        const route = routePath(c, -1);
        metrics.request(
          c.req.method,
          route.endsWith('*') ? 'unmatched' : route,
          c.res.status,
          (performance.now() - started) / 1000,
        );
      }
      if (!logRequests) return;
      // One object of one shape (no spread): `tenant` undefined is left out of the line, as
      // JSON.stringify leaves it. Handed over: the logger may format it later.
      log('request', {
        requestId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        tenant: c.get('caller')?.tenantId,
      });
    },
  };
}
