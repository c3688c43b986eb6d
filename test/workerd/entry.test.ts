/**
 * src/worker.ts itself, in workerd: its fetch handler wired from wrangler.toml's bindings and vars
 * (plus the JWT secret that vitest.config.ts sets as `wrangler secret put` would), and its scheduled
 * handler running retention on a cron tick.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from './bindings.js';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { mintToken } from '../../src/http/tokens.js';
import worker, { createWorkerApp, type WorkerEnv } from '../../src/worker.js';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

const SECRET = { kid: 'k1', secret: 'k1-secret-for-tests-0123456789abcdef' };

async function call(request: Request, e: WorkerEnv = env): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, e, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

async function tick(e: WorkerEnv, cron = '*/15 * * * *'): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron }), e, ctx);
  await waitOnExecutionContext(ctx);
}

async function keys(prefix = ''): Promise<string[]> {
  const page = await env.BLOBS.list({ prefix });
  return page.objects.map((o) => o.key);
}

let token: string;
beforeEach(async () => {
  for (const table of [
    'outbox',
    'artifact_refs',
    'artifacts',
    'blobs',
    'blob_pins',
    'uploads',
    'retention_runs',
    'audit_log',
  ])
    await env.DB.prepare(`DELETE FROM ${table}`).run();
  const left = await keys();
  if (left.length > 0) await env.BLOBS.delete(left);
  token = await mintToken(SECRET, { tenant: 'acme', sub: 'u1', perms: ['read', 'write', 'admin'] });
});

const put = (body: string, headers: Record<string, string> = {}, e?: WorkerEnv) =>
  call(
    new Request('https://artifacts.example/v1/artifacts', {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/plain', ...headers },
      body,
    }),
    e,
  );

describe('the Worker entry (src/worker.ts)', () => {
  it('serves the API on D1 and R2: a put lands in both, and reads back byte for byte', async () => {
    const res = await put('hello from the edge', { 'X-Artifact-Session': 's1', 'X-Artifact-Filename': 'hello.txt' });
    expect(res.status).toBe(201);
    const ref = (await res.json()) as { id: string; sha256: string; sizeBytes: number };
    expect(ref.sizeBytes).toBe(19);
    const row = await env.DB.prepare('SELECT sha256, size_bytes FROM artifacts WHERE id = ?1')
      .bind(ref.id)
      .first<{ sha256: string; size_bytes: number }>();
    expect(row).toEqual({ sha256: ref.sha256, size_bytes: 19 });
    expect(await keys()).toEqual([`blobs/sha256/${ref.sha256.slice(0, 2)}/${ref.sha256.slice(2, 4)}/${ref.sha256}`]);

    const back = await call(
      new Request(`https://artifacts.example/v1/artifacts/${ref.id}`, {
        headers: { Authorization: `Bearer ${token}` },
      }),
    );
    expect(back.status).toBe(200);
    expect(back.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await back.text()).toBe('hello from the edge');
    expect((await call(new Request('https://artifacts.example/healthz'))).status).toBe(200);
  });

  it('without R2 S3 credentials, direct links fall back to the proxy and direct uploads are refused clearly', async () => {
    const ref = (await (await put('proxied')).json()) as { id: string };
    const link = await call(
      new Request(`https://artifacts.example/v1/artifacts/${ref.id}/url`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ mode: 'direct' }),
      }),
    );
    expect(link.status).toBe(200);
    expect(await link.json()).toMatchObject({
      fetchMode: 'proxy',
      url: expect.stringMatching(/^https:\/\/artifacts\.example\//),
    });
    const upload = await call(
      new Request('https://artifacts.example/v1/uploads', {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sizeBytes: 10, sha256: 'a'.repeat(64) }),
      }),
    );
    expect(upload.status).toBe(400);
    expect(await upload.json()).toMatchObject({
      code: 'bad_request',
      details: { reason: 'direct_uploads_unavailable' },
    });
  });

  it('with R2 S3 credentials, direct links are presigned R2 URLs and direct uploads are offered', async () => {
    const e = {
      ...env,
      R2_BUCKET_NAME: 'artifact-store',
      R2_ACCOUNT_ID: '0123456789abcdef0123456789abcdef',
      R2_ACCESS_KEY_ID: 'AKIDTEST',
      R2_SECRET_ACCESS_KEY: 'secret-test-key',
    };
    const ref = (await (await put('presigned', {}, e)).json()) as { id: string; sha256: string };
    const link = await call(
      new Request(`https://artifacts.example/v1/artifacts/${ref.id}/url`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ mode: 'direct' }),
      }),
      e,
    );
    expect(link.status).toBe(200);
    const { url } = (await link.json()) as { url: string };
    const u = new URL(url);
    expect(u.host).toBe('0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com');
    expect(u.pathname).toBe(
      `/artifact-store/blobs/sha256/${ref.sha256.slice(0, 2)}/${ref.sha256.slice(2, 4)}/${ref.sha256}`,
    );
    expect(u.searchParams.get('X-Amz-Credential')).toMatch(/^AKIDTEST\/\d{8}\/auto\/s3\/aws4_request$/);
    expect(u.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(u.searchParams.get('response-content-disposition')).toMatch(/attachment|inline/);

    const upload = await call(
      new Request('https://artifacts.example/v1/uploads', {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sizeBytes: 10, sha256: 'a'.repeat(64) }),
      }),
      e,
    );
    expect(upload.status).toBe(201);
    const offer = (await upload.json()) as { url: string; id: string };
    expect(new URL(offer.url).pathname).toMatch(/^\/artifact-store\/staging\/[0-9a-f-]{36}$/);
  });

  it('answers 503 when the JWT secret is missing, logs what to set, and recovers once it is set', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const { ARTIFACT_STORE_JWT_SECRETS: _, ...bare } = env;
      const res = await call(new Request('https://artifacts.example/healthz'), bare as WorkerEnv);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe('backend_unavailable');
      // The caller learns where to look; the details are for the operator only.
      expect(body.message).toMatch(/wrangler tail/);
      expect(body.message).not.toMatch(/ARTIFACT_STORE/);
      expect(logged.mock.calls.flat().join(' ')).toMatch(/ARTIFACT_STORE_JWT_SECRETS/);
      expect((await call(new Request('https://artifacts.example/healthz'))).status).toBe(200);
    } finally {
      logged.mockRestore();
    }
  });

  it('refuses Node-only settings by name, S3 ones included (R2 has its own)', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      for (const name of [
        'ARTIFACT_STORE_DB_PATH',
        'ARTIFACT_STORE_S3_ACCESS_KEY_ID',
        'ARTIFACT_STORE_CDN_URL',
        'ARTIFACT_STORE_MCP_ALLOWED_HOSTS',
      ]) {
        logged.mockClear();
        const res = await call(new Request('https://artifacts.example/healthz'), { ...env, [name]: 'x' });
        expect(res.status, name).toBe(503);
        expect(logged.mock.calls.flat().join(' '), name).toContain(name);
      }
    } finally {
      logged.mockRestore();
    }
  });

  it('tells a put over the request body limit to upload directly, before reading it', async () => {
    const e = {
      ...env,
      ARTIFACT_STORE_MAX_REQUEST_BODY_BYTES: '1000',
      R2_BUCKET_NAME: 'artifact-store',
      R2_ACCOUNT_ID: '0123456789abcdef0123456789abcdef',
      R2_ACCESS_KEY_ID: 'AKIDTEST',
      R2_SECRET_ACCESS_KEY: 'secret-test-key',
    };
    // Sent as clients send it, with its length (a Request built in-process has none of its own).
    const res = await put('x'.repeat(2000), { 'Content-Length': '2000' }, e);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      code: 'payload_too_large',
      details: { limitBytes: 1000, reason: 'request_body_limit' },
      message: expect.stringMatching(/POST \/v1\/uploads/),
    });
    expect(await keys()).toEqual([]);
    expect((await put('x'.repeat(1000), { 'Content-Length': '1000' }, e)).status).toBe(201);
    // The artifact itself may be bigger: a direct upload of it is offered.
    const upload = await call(
      new Request('https://artifacts.example/v1/uploads', {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sizeBytes: 2000, sha256: 'a'.repeat(64) }),
      }),
      e,
    );
    expect(upload.status).toBe(201);
  });
});

describe('the scheduled handler', () => {
  it('runs retention on a cron tick: expired references go, their bytes are collected, the run is recorded', async () => {
    const e = { ...env, ARTIFACT_STORE_GC_GRACE_SECONDS: '0' };
    const gone = (await (await put('expires soon', { 'X-Artifact-Ttl': '60' }, e)).json()) as {
      id: string;
      sha256: string;
    };
    const kept = (await (await put('stays', { 'X-Artifact-Ttl': '3600' }, e)).json()) as { id: string; sha256: string };
    // Age the first reference past its TTL (the Workers clock cannot be moved).
    await env.DB.prepare('UPDATE artifact_refs SET expires_at = expires_at - 120000 WHERE artifact_id = ?1')
      .bind(gone.id)
      .run();

    await tick(e, '*/15 * * * *');

    const get = (id: string) =>
      call(
        new Request(`https://artifacts.example/v1/artifacts/${id}/meta`, {
          headers: { Authorization: `Bearer ${token}` },
        }),
        e,
      );
    expect((await get(gone.id)).status).toBe(404);
    expect((await get(kept.id)).status).toBe(200);
    expect((await keys()).map((k) => k.slice(k.lastIndexOf('/') + 1))).toEqual([kept.sha256]);
    const runs = await env.DB.prepare('SELECT trigger, report FROM retention_runs').all<{
      trigger: string;
      report: string;
    }>();
    expect(runs.results).toHaveLength(1);
    const run = runs.results![0]!;
    expect(run.trigger).toBe('cron */15 * * * *');
    expect(JSON.parse(run.report)).toMatchObject({ expired: { refs: 1, bytes: 12 }, blobs: { collected: 1 } });
    const events = await env.DB.prepare('SELECT type, artifact_id FROM outbox ORDER BY seq').all<{
      type: string;
      artifact_id: string;
    }>();
    // The tick records the policies it runs under (the first time: nothing recorded before), then the run.
    expect(events.results!.map((r) => r.type)).toEqual([
      'artifact.stored',
      'artifact.stored',
      'audit.recorded',
      'artifact.expired',
      'audit.recorded',
    ]);
    const audit = await env.DB.prepare('SELECT action, role, actor_id AS actorId FROM audit_log ORDER BY seq').all<{
      action: string;
      role: string;
      actorId: string;
    }>();
    expect(audit.results).toEqual([
      { action: 'policy.change', role: 'host', actorId: 'worker' },
      { action: 'retention.run', role: 'scheduler', actorId: expect.stringMatching(/^cron /) },
    ]);

    // A second tick has nothing left to do.
    await tick(e);
    const second = await env.DB.prepare('SELECT report FROM retention_runs ORDER BY id DESC LIMIT 1').first<{
      report: string;
    }>();
    expect(JSON.parse(second!.report)).toMatchObject({ expired: { refs: 0 }, blobs: { collected: 0 } });
  });

  it('a failing run rejects the tick (so the Cron Trigger shows it failed) and leaves data intact', async () => {
    const ref = (await (await put('survives')).json()) as { id: string };
    const broken = {
      ...env,
      DB: {
        ...env.DB,
        prepare: () => {
          throw new Error('D1 is down');
        },
        batch: () => Promise.reject(new Error('D1 is down')),
      },
    } as unknown as WorkerEnv;
    await expect(
      worker.scheduled(createScheduledController({ cron: '*/15 * * * *' }), broken, createExecutionContext()),
    ).rejects.toThrow(/D1 is down/);
    const back = await call(
      new Request(`https://artifacts.example/v1/artifacts/${ref.id}`, {
        headers: { Authorization: `Bearer ${token}` },
      }),
    );
    expect(await back.text()).toBe('survives');
  });
});

describe('keys on Workers: the same rules as on Node', () => {
  const noSecrets = (extra: Record<string, string> = {}): WorkerEnv => ({
    ...env,
    ARTIFACT_STORE_JWT_SECRETS: undefined,
    ARTIFACT_STORE_URL_SIGNING_KEYS: undefined,
    ...extra,
  });

  it('JWKS-only auth with no link keys serves requests, with proxy links off (not a misconfigured 503 on every request)', async () => {
    const e = noSecrets({ ARTIFACT_STORE_JWKS_URL: 'https://keys.example/.well-known/jwks.json' });
    const health = await call(new Request('https://artifacts.example/healthz'), e);
    expect(health.status).toBe(200);

    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'es1', alg: 'ES256', use: 'sig' };
    const { app } = await createWorkerApp(noSecrets(), { jwks: { keys: [jwk] } });
    const jwt = await new SignJWT({ tenant: 'acme', perms: ['read', 'write'] })
      .setProtectedHeader({ alg: 'ES256', kid: 'es1' })
      .setSubject('u1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    const auth = { Authorization: `Bearer ${jwt}` };
    const put = await app.request(
      'https://artifacts.example/v1/artifacts',
      {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'text/plain', 'X-Artifact-Session': 's1' },
        body: 'signed with ES256',
      },
      e,
    );
    expect(put.status).toBe(201);
    const ref = (await put.json()) as { id: string };
    const link = await app.request(
      `https://artifacts.example/v1/artifacts/${ref.id}/url`,
      { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: '{}' },
      e,
    );
    expect(link.status).toBe(503);
    expect(await link.json()).toMatchObject({
      code: 'backend_unavailable',
      message: expect.stringMatching(/ARTIFACT_STORE_URL_SIGNING_KEYS/),
    });
  });

  it('refuses a URL signing key shorter than 32 characters, as Node does in production', async () => {
    const e = { ...env, ARTIFACT_STORE_URL_SIGNING_KEYS: 'l1:too-short' };
    await expect(createWorkerApp(e)).rejects.toThrow(/URL signing key of kid "l1" is shorter than 32/);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const res = await call(new Request('https://artifacts.example/healthz'), e);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: 'backend_unavailable' });
      expect(errors).toHaveBeenCalledWith(expect.stringMatching(/URL signing key of kid "l1"/));
    } finally {
      errors.mockRestore();
    }
  });

  it('refuses to start with no keys at all, saying how to set them on Workers', async () => {
    await expect(createWorkerApp(noSecrets())).rejects.toThrow(
      /without keys: set the secret ARTIFACT_STORE_JWT_SECRETS/,
    );
  });
});
