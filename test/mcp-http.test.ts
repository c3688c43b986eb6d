/**
 * /mcp: the artifact MCP server over Streamable HTTP on the service itself, behind the same auth.
 * A real HTTP server (the test app on @hono/node-server) and the SDK's StreamableHTTPClientTransport.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OpenAPIHono } from '@hono/zod-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authenticator, Caller } from '../src/http/auth.js';
import type { AppEnv } from '../src/http/context.js';
import { registerMcp } from '../src/http/routes/mcp.js';
import { bearer, createTestApp, putArtifact, type TestApp } from './helpers/app.js';
import * as payloads from './helpers/payloads.js';

let t: TestApp;
let server: ServerType;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  server = await new Promise<ServerType>((ok) => {
    const s = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await t.app.closeMcpSessions();
  const closed = new Promise<void>((ok) => server.close(() => ok()));
  (server as import('node:http').Server).closeAllConnections();
  await closed;
  await t.cleanup();
});

async function connect(token: string) {
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: bearer(token) } }),
  );
  return client;
}

const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

describe('/mcp over Streamable HTTP', () => {
  it("lists and reads the caller's artifacts, and signs download links", async () => {
    const token = await t.token({ tenant: 'acme', session: 's-1', perms: ['read', 'write'] });
    const png = payloads.png(3000, 2);
    const put = (
      await putArtifact(t.app, token, png, { 'Content-Type': 'image/png', 'X-Artifact-Filename': 'map.png' })
    ).json;
    const client = await connect(token);
    expect(client.getServerVersion()?.name).toBe('artifact-store');
    const { resources: listed } = await client.listResources();
    expect(listed.map((r) => r.uri)).toEqual([`artifact://${put.id}`]);
    const read = await client.readResource({ uri: `artifact://${put.id}` });
    expect(Buffer.from((read.contents[0] as { blob: string }).blob, 'base64').equals(png)).toBe(true);
    const url = await client.callTool({ name: 'artifact_url', arguments: { id: put.id } });
    const link = textOf(url).slice(textOf(url).lastIndexOf(' ') + 1);
    expect(link.startsWith(`${base}/v1/download/`)).toBe(true);
    expect(Buffer.from(await (await fetch(link)).arrayBuffer()).equals(png)).toBe(true);
    await client.close();
  });

  it('keeps sessions apart, with the same not-found answer as for a missing artifact', async () => {
    const mine = await t.token({ tenant: 'acme', session: 's-mine', perms: ['read', 'write'] });
    const theirs = await t.token({ tenant: 'acme', session: 's-theirs', perms: ['read', 'write'] });
    const own = (await putArtifact(t.app, mine, 'mine')).json;
    const other = (await putArtifact(t.app, theirs, 'theirs')).json;
    const client = await connect(mine);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([`artifact://${own.id}`]);
    const outOfScope = (await client.readResource({ uri: `artifact://${other.id}` }).catch((e: unknown) => e)) as {
      code: number;
      message: string;
    };
    const missing = (await client
      .readResource({ uri: `artifact://art_${'f'.repeat(24)}` })
      .catch((e: unknown) => e)) as { code: number; message: string };
    expect(outOfScope.code).toBe(-32002);
    expect(outOfScope.message.replace(other.id, 'X')).toBe(missing.message.replace(`art_${'f'.repeat(24)}`, 'X'));
    await client.close();
  });

  it('wants a token, and does not let another caller use an open MCP session', async () => {
    const noToken = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ code: 'unauthorized', message: expect.any(String) });

    const mine = await t.token({ tenant: 'acme', session: 's-owner', perms: ['read'] });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: bearer(mine) },
    });
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    expect(sessionId).toBeTruthy();
    const intruder = await t.token({ tenant: 'acme', session: 's-intruder', perms: ['read'] });
    const hijack = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        ...bearer(intruder),
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sessionId,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'resources/list', params: {} }),
    });
    expect(hijack.status).toBe(404);
    const unknown = await fetch(`${base}/mcp`, {
      method: 'GET',
      headers: { ...bearer(mine), Accept: 'text/event-stream', 'Mcp-Session-Id': 'no-such-session' },
    });
    expect(unknown.status).toBe(404);
    await client.close();
  });

  it('refuses a browser Origin that is neither this host nor a CORS origin (DNS rebinding), before auth', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const foreign = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, Origin: 'http://evil.example' },
      body: JSON.stringify(init),
    });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/Origin http:\/\/evil\.example may not use this MCP endpoint/),
    });
    const token = await t.token({ tenant: 'acme', session: 's-origin', perms: ['read'] });
    const same = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, ...bearer(token), Origin: base },
      body: JSON.stringify(init),
    });
    expect(same.status).toBe(200);
    await same.body?.cancel();
  });

  it('tells a subscriber when its artifact is deleted through the HTTP API (from the outbox)', async () => {
    const token = await t.token({ tenant: 'acme', session: 's-sub', perms: ['read', 'write'] });
    const watched = (await putArtifact(t.app, token, 'watch me')).json;
    const client = await connect(token);
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: true });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await client.subscribeResource({ uri: `artifact://${watched.id}` });
    // The standalone SSE stream (GET /mcp) carries server notifications; let it open.
    await new Promise((r) => setTimeout(r, 300));
    const del = await t.app.request(`/v1/artifacts/${watched.id}`, { method: 'DELETE', headers: bearer(token) });
    expect(del.status).toBe(204);
    await expect.poll(() => updates, { timeout: 10_000 }).toEqual([`artifact://${watched.id}`]);
    await client.close();
  });
});

describe('/mcp session housekeeping', () => {
  it('closes idle sessions, and the least recently used at the cap, when the next session opens', async () => {
    const caller: Caller = {
      kind: 'jwt',
      role: 'tenant',
      actorId: 'tester',
      tenantId: 'acme',
      sessionId: 's-house',
      perms: new Set(['read']),
    };
    const app = new OpenAPIHono<AppEnv>();
    const mount = registerMcp(
      app,
      { service: t.service, ops: t.ops, auth: { authenticate: async () => caller } as unknown as Authenticator },
      { idleMs: 200, maxSessions: 2 },
    );
    const srv = await new Promise<ServerType>((ok) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
    });
    const url = new URL(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`);
    const open = async () => {
      const transport = new StreamableHTTPClientTransport(url);
      const client = new Client({ name: 'host', version: '1.0.0' });
      await client.connect(transport);
      return { client, id: transport.sessionId! };
    };
    const alive = async (id: string) =>
      (
        await fetch(url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'Mcp-Session-Id': id,
            'Mcp-Protocol-Version': '2025-06-18',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
        })
      ).status === 200;
    try {
      const a = await open();
      await new Promise((r) => setTimeout(r, 300));
      const b = await open(); // a has been idle past 200 ms
      expect(await alive(a.id)).toBe(false);
      expect(await alive(b.id)).toBe(true);
      const c = await open();
      const d = await open(); // the cap is 2: opening d closes the least recently used, b
      expect(await alive(b.id)).toBe(false);
      expect((await alive(c.id)) && (await alive(d.id))).toBe(true);
    } finally {
      await mount.closeAll();
      const closed = new Promise<void>((ok) => srv.close(() => ok()));
      (srv as import('node:http').Server).closeAllConnections();
      await closed;
    }
  }, 30_000);
});
