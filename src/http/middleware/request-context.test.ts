import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { respondsWithRequestId, type AppEnv } from '../context.js';
import { chain } from './chain.js';
import { errorMapping } from './error-mapping.js';
import { requestContext } from './request-context.js';

function app() {
  const a = new Hono<AppEnv>();
  a.use('*', chain([requestContext()], errorMapping({ logger: silentLogger })));
  a.get('/id', (c) => c.text(c.get('requestId')));
  // A handler that builds its answer with the id in it (as downloads do).
  a.get('/own', (c) => new Response('own', { headers: { 'X-Request-Id': `${respondsWithRequestId(c)}!` } }));
  a.post('/put', (c) => c.text('refused early', 400));
  return a;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request context', () => {
  it('keeps an X-Request-Id of plain characters and sends it back', async () => {
    const res = await app().request('/id', { headers: { 'X-Request-Id': 'trace-42.a:b_c' } });
    expect(await res.text()).toBe('trace-42.a:b_c');
    expect(res.headers.get('x-request-id')).toBe('trace-42.a:b_c');
  });

  it('gives a new UUID for a missing, too long or strange X-Request-Id', async () => {
    for (const sent of [undefined, 'x'.repeat(129), 'a b', 'é', '<script>']) {
      const res = await app().request('/id', sent === undefined ? {} : { headers: { 'X-Request-Id': sent } });
      const id = await res.text();
      expect(id).toMatch(UUID);
      expect(res.headers.get('x-request-id')).toBe(id);
    }
  });

  it('leaves alone an answer that carries the id itself', async () => {
    const res = await app().request('/own', { headers: { 'X-Request-Id': 'r1' } });
    expect(res.headers.get('x-request-id')).toBe('r1!');
  });

  it('says Connection: close when the answer leaves a request body unread (Node)', async () => {
    const unread = { incoming: { readableEnded: false, complete: false, readableFlowing: null } };
    const res = await app().request('/put', { method: 'POST', body: 'x' }, unread);
    expect(res.headers.get('connection')).toBe('close');
    // A body that arrived whole and was never touched: Node discards it and keeps the connection.
    const whole = { incoming: { readableEnded: false, complete: true, readableFlowing: null } };
    expect((await app().request('/put', { method: 'POST', body: 'x' }, whole)).headers.get('connection')).toBeNull();
    // GET and HEAD have no body to leave.
    expect((await app().request('/id', {}, unread)).headers.get('connection')).toBeNull();
  });
});
