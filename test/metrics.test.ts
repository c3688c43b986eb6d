import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { startServer, type RunningServer } from '../src/node.js';
import { issueApiKey } from '../src/service/api-keys.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(env: Record<string, string> = {}): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'artifact-metrics-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const server = await startServer(
    loadConfig(
      { ARTIFACT_STORE_METRICS: 'true', ...env },
      { port: 0, dataDir, env: 'test', logLevel: 'silent', maxArtifactsPerSession: 1 },
    ),
  );
  cleanups.push(() => server.close());
  return server;
}

/** The value of one sample line, e.g. metric('x_total{a="b"}'). */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('/metrics', () => {
  it('counts requests by route pattern and status, bytes in and out, evictions, stored totals and retention runs', async () => {
    const server = await serve();
    const token = await server.mintToken({ tenant: 'acme', session: 's1', perms: ['read', 'write'] });
    const { key: admin } = await issueApiKey(server.repo, { operator: true });
    const auth = { Authorization: `Bearer ${token}` };
    const put = async (body: string) =>
      (await (
        await fetch(`${server.url}/v1/artifacts`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'text/plain' },
          body,
        })
      ).json()) as { id: string };
    await put('first');
    const second = await put('second!');
    expect((await fetch(`${server.url}/v1/artifacts/${second.id}`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/artifacts/art_000000000000000000000000`, { headers: auth })).status).toBe(
      404,
    );
    expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
    expect(
      (
        await fetch(`${server.url}/v1/admin/retention`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${admin}` },
        })
      ).status,
    ).toBe(200);

    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(sample(text, 'artifact_store_http_requests_total{method="POST",route="/v1/artifacts",status="201"}')).toBe(
      2,
    );
    expect(
      sample(text, 'artifact_store_http_requests_total{method="GET",route="/v1/artifacts/:id",status="200"}'),
    ).toBe(1);
    expect(
      sample(text, 'artifact_store_http_requests_total{method="GET",route="/v1/artifacts/:id",status="404"}'),
    ).toBe(1);
    expect(sample(text, 'artifact_store_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(
      sample(text, 'artifact_store_http_request_duration_seconds_count{method="GET",route="/v1/artifacts/:id"}'),
    ).toBe(2);
    expect(sample(text, 'artifact_store_bytes_in_total')).toBe('first'.length + 'second!'.length);
    expect(sample(text, 'artifact_store_bytes_out_total')).toBe('second!'.length);
    // The session holds one artifact at most: the second put evicted the first.
    expect(sample(text, 'artifact_store_evictions_total')).toBe(1);
    expect(sample(text, 'artifact_store_references')).toBe(1);
    expect(sample(text, 'artifact_store_reference_bytes')).toBe('second!'.length);
    expect(sample(text, 'artifact_store_retention_run_duration_seconds_count')).toBe(1);
    expect(text).toContain('artifact_store_process_cpu_user_seconds_total');
    // No tenant, session or artifact id in any label.
    expect(text).not.toContain('acme');
    expect(text).not.toContain(second.id);
  });

  it('is off unless asked for', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'artifact-metrics-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const server = await startServer(loadConfig({}, { port: 0, dataDir, env: 'test', logLevel: 'silent' }));
    cleanups.push(() => server.close());
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });

  it('wants the metrics token when one is configured', async () => {
    const server = await serve({ ARTIFACT_STORE_METRICS_TOKEN: 'scrape-secret' });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { Authorization: 'Bearer scrape-secret' } })).status).toBe(
      200,
    );
  });
});
