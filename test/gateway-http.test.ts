/**
 * The gateway mounted in the service (`ARTIFACT_STORE_GATEWAY_CONFIG`), in `artifact-store serve`
 * as npm start runs it: Streamable HTTP at /mcp/gateway behind the bearer auth, artifacts in the
 * caller's scope, per-tenant allowlists, the REST view of resources (/v1/mcp/servers…) and
 * resource.updated on /v1/events.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, type TokenClaims } from '../src/http/tokens.js';
import { CLI_ARGS, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import { connectOrExplain, peerEntry } from './helpers/mcp-peers.js';

const SECRET = { kid: 'gw', secret: randomBytes(32).toString('base64url') };
const LONG_BASE64 = /[A-Za-z0-9+/]{256,}/;

let dir: string;
let srv: CliServer;

const token = (claims: Partial<TokenClaims>) =>
  mintToken(SECRET, { tenant: 'acme', sub: 'agent', perms: ['read', 'write'], ...claims }, 3600);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gateway-http-'));
  const scripted = {
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'test/helpers/scripted-mcp-server.ts')],
    cwd: ROOT,
  };
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        everything: {
          command: process.execPath,
          args: [peerEntry('server-everything'), 'stdio'],
          artifacts: { tenants: ['acme'] },
        },
        scripted: { ...scripted, env: { SCRIPTED_NAME: 'scripted' }, artifacts: { tenants: '*' } },
        // Listed for nobody: no tenant may use it (the default).
        hostfiles: { command: process.execPath, args: [peerEntry('server-filesystem'), dir] },
      },
    }),
  );
  srv = await startCliServer(join(dir, 'data'), {
    ARTIFACT_STORE_GATEWAY_CONFIG: join(dir, 'mcp.json'),
    ARTIFACT_STORE_JWT_SECRETS: `${SECRET.kid}:${SECRET.secret}`,
  });
}, 90_000);

afterAll(async () => {
  await srv?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function connect(bearer: string): Promise<Client> {
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp/gateway`), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    }),
  );
  return client;
}

const api = async (path: string, bearer: string) => {
  const res = await fetch(`${srv.url}${path}`, { headers: { Authorization: `Bearer ${bearer}` } });
  return { status: res.status, body: (await res.json()) as any };
};

describe('the gateway mounted in the service', () => {
  it('lists for each tenant only the servers the config lists it for', async () => {
    const acme = await connect(await token({ tenant: 'acme', session: 's1' }));
    const globex = await connect(await token({ tenant: 'globex' }));
    try {
      const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);
      const acmeTools = await names(acme);
      expect(acmeTools).toContain('everything__get-tiny-image');
      expect(acmeTools).toContain('scripted__echo');
      expect(acmeTools.some((n) => n.startsWith('hostfiles__'))).toBe(false);
      const globexTools = await names(globex);
      expect(globexTools.some((n) => n.startsWith('everything__'))).toBe(false);
      expect(globexTools).toContain('scripted__echo');
      // A tool of a server the tenant may not use reads like one that does not exist.
      await expect(globex.callTool({ name: 'everything__echo', arguments: { message: 'x' } })).rejects.toThrow(
        /Unknown tool everything__echo/,
      );
    } finally {
      await acme.close();
      await globex.close();
    }
    const listed = await api('/v1/mcp/servers', await token({ tenant: 'globex' }));
    expect(listed.body.servers.map((s: { name: string }) => s.name)).toEqual(['scripted']);
  });

  it("a tool's artifacts land in the caller's scope, with a download link through the service", async () => {
    const bearer = await token({ tenant: 'acme', session: 'sess-a' });
    const client = await connect(bearer);
    let result: CallToolResult;
    try {
      result = (await client.callTool({ name: 'everything__get-tiny-image', arguments: {} })) as CallToolResult;
    } finally {
      await client.close();
    }
    expect(JSON.stringify(result)).not.toMatch(LONG_BASE64);
    const id = (result.content.find((b) => b.type === 'resource_link') as { uri: string }).uri.replace(
      'artifact://',
      '',
    );
    const meta = await api(`/v1/artifacts/${id}/meta`, bearer);
    expect(meta.body).toMatchObject({ id, scope: { tenantId: 'acme', sessionId: 'sess-a' }, mimeType: 'image/png' });
    // Another session of the tenant does not see it.
    expect((await api(`/v1/artifacts/${id}/meta`, await token({ tenant: 'acme', session: 'sess-b' }))).status).toBe(
      404,
    );
    const texts = result.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    const link = /(http:\/\/\S+\/v1\/download\/\S+)/.exec(texts)![1]!;
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
  });

  it('refuses tokens that cannot store (the gateway stores what its tools return)', async () => {
    const readOnly = await token({ tenant: 'acme', perms: ['read'] });
    await expect(connect(readOnly)).rejects.toThrow(/write/);
  });

  it('REST: lists a server’s resources, reads one into the caller’s scope, and keeps servers of other tenants out', async () => {
    const bearer = await token({ tenant: 'acme', session: 'rest' });
    const servers = await api('/v1/mcp/servers', bearer);
    expect(servers.status).toBe(200);
    expect(servers.body.servers.map((s: { name: string }) => s.name)).toEqual(['everything', 'scripted']);
    expect(servers.body.servers[0]).toMatchObject({ state: 'ready', resources: true, subscribe: true });

    const page = await api('/v1/mcp/servers/everything/resources', bearer);
    expect(page.status).toBe(200);
    expect(page.body.resources.length).toBeGreaterThan(0);

    const uri = encodeURIComponent('demo://resource/dynamic/blob/4');
    const read = await api(`/v1/mcp/servers/everything/resources/read?uri=${uri}`, bearer);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ uri: 'demo://resource/dynamic/blob/4', fromCache: false });
    expect(read.body.artifacts[0].scope).toEqual({ tenantId: 'acme', userId: 'agent', sessionId: 'rest' });
    const again = await api(`/v1/mcp/servers/everything/resources/read?uri=${uri}`, bearer);
    expect(again.body.fromCache).toBe(true);
    // The cache is the scope's own: another session reads afresh, into its own scope.
    const other = await api(
      `/v1/mcp/servers/everything/resources/read?uri=${uri}`,
      await token({ tenant: 'acme', session: 'rest-2' }),
    );
    expect(other.body.fromCache).toBe(false);
    expect(other.body.artifacts[0].scope.sessionId).toBe('rest-2');

    const globex = await token({ tenant: 'globex' });
    for (const path of [
      '/v1/mcp/servers/everything/resources',
      `/v1/mcp/servers/everything/resources/read?uri=${uri}`,
      '/v1/mcp/servers/hostfiles/resources',
    ])
      expect(await api(path, globex)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(
      await api(`/v1/mcp/servers/everything/resources/read?uri=${encodeURIComponent('demo://no/such')}`, bearer),
    ).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect(await api('/v1/mcp/servers/everything/resources/read', bearer)).toMatchObject({
      status: 400,
      body: { code: 'bad_request' },
    });
    expect(
      (await api(`/v1/mcp/servers/everything/resources/read?uri=${uri}`, await token({ perms: ['read'] }))).status,
    ).toBe(403);
  });

  it('resource.updated reaches /v1/events of the scope that read the resource, and no other', async () => {
    const reader = await token({ tenant: 'acme', session: 'watcher' });
    const bystander = await token({ tenant: 'acme', session: 'bystander' });
    const collect = (bearer: string) => {
      const abort = new AbortController();
      const events: { event?: string; data: string }[] = [];
      const done = (async () => {
        const res = await fetch(`${srv.url}/v1/events`, {
          headers: { Authorization: `Bearer ${bearer}` },
          signal: abort.signal,
        });
        const parser = createParser({ onEvent: (e) => events.push({ event: e.event, data: e.data }) });
        const decoder = new TextDecoder();
        try {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
            parser.feed(decoder.decode(chunk, { stream: true }));
        } catch {
          // Aborted at the end of the test.
        }
      })();
      const stop = async () => {
        abort.abort();
        await done;
      };
      return { events, stop };
    };
    const watching = collect(reader);
    const other = collect(bystander);
    const read = await api(
      `/v1/mcp/servers/scripted/resources/read?uri=${encodeURIComponent('scripted://counter')}`,
      reader,
    );
    expect(read.status).toBe(200);
    await new Promise((ok) => setTimeout(ok, 300));
    const client = await connect(await token({ tenant: 'acme', session: 'bumper' }));
    try {
      await client.callTool({ name: 'scripted__bump', arguments: {} });
    } finally {
      await client.close();
    }
    const deadline = Date.now() + 10_000;
    while (!watching.events.some((e) => e.event === 'resource.updated') && Date.now() < deadline)
      await new Promise((ok) => setTimeout(ok, 50));
    await new Promise((ok) => setTimeout(ok, 500));
    await watching.stop();
    await other.stop();
    const updated = watching.events.filter((e) => e.event === 'resource.updated').map((e) => JSON.parse(e.data));
    expect(updated).toEqual([
      { type: 'resource.updated', resource: { server: 'scripted', uri: 'scripted://counter' }, at: expect.any(String) },
    ]);
    expect(other.events.filter((e) => e.event === 'resource.updated')).toEqual([]);
    // The next read is fresh: the update dropped the cached one.
    const after = await api(
      `/v1/mcp/servers/scripted/resources/read?uri=${encodeURIComponent('scripted://counter')}`,
      reader,
    );
    expect(after.body.fromCache).toBe(false);
    expect(JSON.stringify(after.body.content)).not.toBe(JSON.stringify(read.body.content));
  });
});

describe('artifact-store gateway on stdio as a client of this service', () => {
  it("stores into the service under ARTIFACT_STORE_SESSION, and its links are the service's", async () => {
    const bearer = await token({ tenant: 'acme' });
    const client = new Client({ name: 'host', version: '1.0.0' });
    let stderr = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...CLI_ARGS, 'gateway', '--config', join(dir, 'mcp.json')],
      cwd: ROOT,
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
        ARTIFACT_STORE_URL: srv.url,
        ARTIFACT_STORE_TOKEN: bearer,
        ARTIFACT_STORE_SESSION: 'desktop-1',
      },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    await connectOrExplain(client, transport, () => stderr);
    let result: CallToolResult;
    try {
      // On stdio the gateway has one user: every server in the file, allowlists or not.
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('hostfiles__read_media_file');
      result = (await client.callTool({ name: 'everything__get-tiny-image', arguments: {} })) as CallToolResult;
    } finally {
      await client.close();
    }
    expect(JSON.stringify(result)).not.toMatch(LONG_BASE64);
    const id = (result.content.find((b) => b.type === 'resource_link') as { uri: string }).uri.replace(
      'artifact://',
      '',
    );
    const meta = await api(`/v1/artifacts/${id}/meta?session=desktop-1`, bearer);
    expect(meta.body).toMatchObject({ id, scope: { tenantId: 'acme', sessionId: 'desktop-1' } });
    const texts = result.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    const link = /(http:\/\/\S+\/v1\/download\/\S+)/.exec(texts)![1]!;
    expect(link.startsWith(`${srv.url}/v1/download/`)).toBe(true);
    expect((await fetch(link)).status).toBe(200);
  }, 60_000);
});
