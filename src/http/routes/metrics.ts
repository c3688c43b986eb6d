/** GET /metrics: Prometheus metrics, outside /v1 and its bearer tokens. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context.js';
import { header } from '../fast-header.js';
import type { Metrics } from '../metrics.js';

/** Scrapers send `Authorization: Bearer <token>` when `token` (ARTIFACT_STORE_METRICS_TOKEN) is set. */
export function registerMetrics(app: OpenAPIHono<AppEnv>, metrics: Metrics, token?: string): void {
  app.get('/metrics', async (c) => {
    if (token && header(c, 'authorization') !== `Bearer ${token}`) {
      return c.json(
        { code: 'unauthorized', message: 'Send Authorization: Bearer <ARTIFACT_STORE_METRICS_TOKEN>.' },
        401,
        { 'WWW-Authenticate': 'Bearer' },
      );
    }
    return c.body(await metrics.registry.metrics(), 200, {
      'Content-Type': metrics.registry.contentType,
      'Cache-Control': 'no-store',
    });
  });
}
