/**
 * @modelcontextprotocol/conformance (0.1.13: later releases need Node 22) against the artifact MCP
 * server at /mcp, over Streamable HTTP, as the service mounts it on loopback.
 *
 * The suite cannot send an Authorization header, so this mount authenticates every request as one
 * fixed caller; the transport, the MCP server, the session handling and the DNS-rebinding checks are
 * the production ones (registerMcp). Scenarios that need the reference server's fixtures (tools such
 * as test_simple_text, resources such as test://static-text, prompts) do not apply to this server.
 * The README lists what runs and why two scenarios are expected to fail. The client scenarios drive
 * test/helpers/conformance-client.ts: the SDK Client as wrapMcpClient and ResourceBridge use it.
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serve, type ServerType } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authenticator, Caller } from '../src/http/auth.js';
import type { AppEnv } from '../src/http/context.js';
import { LOOPBACK_HOSTS, registerMcp } from '../src/http/routes/mcp.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { ROOT } from './helpers/cli-server.js';

const run = promisify(execFile);
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

let t: TestApp;
let server: ServerType;
let url: string;
let mount: ReturnType<typeof registerMcp>;

beforeAll(async () => {
  t = await createTestApp();
  const caller: Caller = {
    kind: 'jwt',
    role: 'tenant',
    actorId: 'tester',
    tenantId: 'conformance',
    sessionId: 's-1',
    perms: new Set(['read', 'write']),
  };
  const app = new OpenAPIHono<AppEnv>();
  mount = registerMcp(
    app,
    { service: t.service, ops: t.ops, auth: { authenticate: async () => caller } as unknown as Authenticator },
    { allowedHosts: LOOPBACK_HOSTS },
  );
  await t.service.putText({ tenantId: 'conformance', sessionId: 's-1' }, 'hello', { filename: 'hello.txt' });
  server = await new Promise<ServerType>((ok) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
  });
  url = `http://localhost:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await mount?.closeAll();
  const closed = new Promise<void>((ok) => server.close(() => ok()));
  (server as import('node:http').Server).closeAllConnections();
  await closed;
  await t.cleanup();
});

/** Runs one server scenario; returns the suite's pass/fail counts and its output. */
async function scenario(name: string): Promise<{ passed: number; failed: number; output: string }> {
  const result = await run(process.execPath, [SUITE, 'server', '--url', url, '--scenario', name], {
    cwd: ROOT,
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  }).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));
  const output = `${result.stdout}\n${result.stderr}`;
  const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
  if (!m) throw new Error(`no result line from the conformance suite for ${name}:\n${output}`);
  return { passed: Number(m[1]), failed: Number(m[3]), output };
}

describe('MCP conformance (server scenarios that apply to an artifact server)', () => {
  it.each([
    'server-initialize',
    'ping',
    'tools-list',
    'resources-list',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
  ])(
    '%s passes',
    async (name) => {
      const { passed, failed, output } = await scenario(name);
      expect(failed, output).toBe(0);
      expect(passed, output).toBeGreaterThan(0);
    },
    90_000,
  );

  // Both subscribe to the suite's fixture test://watched-resource. This server refuses subscriptions
  // to uris that are not stored artifacts (-32002), so a host learns at once that no update will come.
  it.each(['resources-subscribe', 'resources-unsubscribe'])(
    '%s fails only on the fixture uri',
    async (name) => {
      const { failed, output } = await scenario(name);
      expect(failed).toBe(1);
      expect(output).toContain('Resource not found: test://watched-resource');
    },
    90_000,
  );
});

describe('MCP conformance (client scenarios), driving wrapMcpClient + ResourceBridge', () => {
  it.each(['initialize', 'tools_call', 'sse-retry'])(
    '%s passes',
    async (name) => {
      const client = `${join(ROOT, 'node_modules/.bin/tsx')} ${join(ROOT, 'test/helpers/conformance-client.ts')}`;
      const result = await run(process.execPath, [SUITE, 'client', '--command', client, '--scenario', name], {
        cwd: ROOT,
        timeout: 90_000,
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      }).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));
      const output = `${result.stdout}\n${result.stderr}`;
      const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
      expect(m, output).not.toBeNull();
      expect(Number(m![3]), output).toBe(0);
      expect(Number(m![1]), output).toBeGreaterThan(0);
    },
    120_000,
  );
});
