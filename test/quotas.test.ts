import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig, policiesOf } from '../src/core/config.js';
import { createPolicies, type Policy, type TenantPolicies } from '../src/core/policy.js';
import type { ArtifactScope } from '../src/core/schemas.js';
import type { Access, ArtifactService } from '../src/service/artifact-service.js';
import type { RetentionReport } from '../src/service/retention/index.js';
import { expectArtifactError } from './helpers/artifact-errors.js';
import { TEST_POLICY } from './helpers/policy.js';
import { createServiceHarness } from './helpers/service-harness.js';

const KiB = 1024;

const BASE = TEST_POLICY;

interface Harness {
  service: ArtifactService;
  clock: { t: number };
  dbPath: string;
  /** Advances the clock by 1 s, so every step has its own time. */
  tick(): void;
  events(type?: string): { type: string; artifactId: string; scope: Record<string, string> }[];
  /** One retention run over the same database and blobs, at the harness's clock. */
  retention(): Promise<RetentionReport>;
}

/** A service with these quotas over a temp folder (test/helpers/service-harness.ts), closed when the test ends. */
async function harness(policy: Partial<Policy> = {}, overrides: TenantPolicies = {}): Promise<Harness> {
  const h = await createServiceHarness({
    prefix: 'artifact-quotas-',
    limits: { ...BASE, touchFlushMs: 0 },
    policies: createPolicies({ ...BASE, ...policy }, overrides),
    db: 'readonly',
  });
  return {
    service: h.service,
    clock: h.clock,
    dbPath: h.dbPath,
    tick: () => {
      h.clock.t += 1000;
    },
    retention: () => h.retention({ graceMs: 1000 }),
    events: (type) =>
      (
        h.db.prepare('SELECT type, artifact_id AS artifactId, scope FROM outbox ORDER BY seq').all() as {
          type: string;
          artifactId: string;
          scope: string;
        }[]
      )
        .map((e) => ({ ...e, scope: JSON.parse(e.scope) as Record<string, string> }))
        .filter((e) => type === undefined || e.type === type),
  };
}

const session = (sessionId: string, tenantId = 'acme'): ArtifactScope => ({ tenantId, sessionId });
const sessionAccess = (sessionId: string, tenantId = 'acme'): Access => ({ tenantId, filter: { sessionId } });

async function ids(service: ArtifactService, access: Access): Promise<string[]> {
  return (await service.list(access, { limit: 1000 })).items.map((r) => r.id).sort();
}

/** Puts `n` distinct artifacts of `size` bytes, one clock tick apart; returns their ids in order. */
async function putMany(h: Harness, scope: ArtifactScope, n: number, size = KiB, name = 'a'): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    h.tick();
    out.push((await h.service.putBytes(scope, randomBytes(size), { filename: `${name}${i}.bin` })).ref.id);
  }
  return out;
}

async function touch(h: Harness, access: Access, id: string) {
  h.tick();
  const { body } = await h.service.getStream(access, id);
  await new Response(body).arrayBuffer();
  await h.service.flush();
}

describe('session limits: lru, fifo, reject, never', () => {
  it('lru evicts the least recently accessed references, and says so with artifact.evicted', async () => {
    const h = await harness({ maxArtifactsPerSession: 3 });
    const [a, b, c] = await putMany(h, session('s1'), 3);
    await touch(h, sessionAccess('s1'), a!);
    const [d] = await putMany(h, session('s1'), 1, KiB, 'd');
    expect(await ids(h.service, sessionAccess('s1'))).toEqual([a, c, d].sort());
    expect(h.events('artifact.evicted')).toEqual([
      { type: 'artifact.evicted', artifactId: b, scope: { userId: '', sessionId: 's1', traceId: '' } },
    ]);
    // The evicted one is gone for the session (the same 404 as never stored).
    await expectArtifactError(h.service.getRef(sessionAccess('s1'), b!), 'not_found');
  });

  it('fifo evicts the oldest created, whatever was read since', async () => {
    const h = await harness({ maxArtifactsPerSession: 3, cleanupStrategy: 'fifo' });
    const [a, b, c] = await putMany(h, session('s1'), 3);
    await touch(h, sessionAccess('s1'), a!);
    const [d] = await putMany(h, session('s1'), 1, KiB, 'd');
    expect(await ids(h.service, sessionAccess('s1'))).toEqual([b, c, d].sort());
    expect(h.events('artifact.evicted').map((e) => e.artifactId)).toEqual([a]);
  });

  it('reject refuses with quota_exceeded naming the limit and the usage, and stores nothing', async () => {
    const h = await harness({ maxArtifactsPerSession: 2, cleanupStrategy: 'reject' });
    const before = await putMany(h, session('s1'), 2);
    const err = await expectArtifactError(h.service.putText(session('s1'), 'one too many'), 'quota_exceeded');
    expect(err.message).toMatch(/maxArtifactsPerSession/);
    expect(err.message).toMatch(/2 of 2 artifacts/);
    expect(err.details).toMatchObject({
      scope: 'session',
      id: 's1',
      limit: 'maxArtifactsPerSession',
      limitValue: 2,
      usageCount: 2,
    });
    expect(await ids(h.service, sessionAccess('s1'))).toEqual(before.sort());
    expect(h.events('artifact.stored')).toHaveLength(2);
    // A re-put of what the session already holds is no new use: it is not refused.
    h.tick();
    expect((await h.service.putText(session('s2'), 'x')).created).toBe(true);
  });

  it("never evicts nothing and refuses nothing: puts go past session and trace limits (penguiflow's none)", async () => {
    const h = await harness({
      maxArtifactsPerSession: 2,
      maxSessionBytes: 4 * KiB,
      maxArtifactsPerTrace: 2,
      cleanupStrategy: 'never',
    });
    const scope = { tenantId: 'acme', sessionId: 's1', traceId: 't1' };
    const stored = await putMany(h, scope, 5, 2 * KiB);
    // Bigger than the whole session limit, too.
    h.tick();
    const big = await h.service.putBytes(scope, randomBytes(8 * KiB));
    expect(big.created).toBe(true);
    expect(await ids(h.service, sessionAccess('s1'))).toEqual([...stored, big.ref.id].sort());
    expect(h.events('artifact.evicted')).toEqual([]);
    // A retention run keeps them too, and counts the scopes it left over their limits.
    const report = await h.retention();
    expect(report.evicted.refs).toBe(0);
    expect(report.overLimitKept.scopes).toBe(2); // the session and the trace
  });

  it('the tenant quota refuses whatever the strategy, never included', async () => {
    const h = await harness({ maxTenantBytes: 5 * KiB, cleanupStrategy: 'never' });
    await putMany(h, session('s1'), 2, 2 * KiB);
    const err = await expectArtifactError(h.service.putBytes(session('s2'), randomBytes(2 * KiB)), 'quota_exceeded');
    expect(err.details).toMatchObject({ scope: 'tenant', limit: 'maxTenantBytes' });
  });

  it('byte limits evict until the new artifact fits, counting sizes', async () => {
    const h = await harness({ maxSessionBytes: 10 * KiB });
    const [a, b, c] = await putMany(h, session('s1'), 3, 4 * KiB);
    // 12 KiB would not fit 10: the oldest 4 KiB goes.
    expect(await ids(h.service, sessionAccess('s1'))).toEqual([b, c].sort());
    const [d] = await putMany(h, session('s1'), 1, 7 * KiB, 'big');
    // 4 + 4 + 7 > 10: both older ones go, the 7 KiB one stays alone.
    expect(await ids(h.service, sessionAccess('s1'))).toEqual([d]);
    expect(h.events('artifact.evicted').map((e) => e.artifactId)).toEqual([a, b, c]);
  });

  it('an artifact larger than the whole session limit is refused outright, and nothing is evicted', async () => {
    const h = await harness({ maxSessionBytes: 8 * KiB });
    const kept = await putMany(h, session('s1'), 2, 2 * KiB);
    const err = await expectArtifactError(h.service.putBytes(session('s1'), randomBytes(9 * KiB)), 'quota_exceeded');
    expect(err.details).toMatchObject({
      scope: 'session',
      limit: 'maxSessionBytes',
      limitValue: 8 * KiB,
      neededBytes: 9 * KiB,
    });
    expect(await ids(h.service, sessionAccess('s1'))).toEqual(kept.sort());
    expect(h.events('artifact.evicted')).toEqual([]);
  });

  it('a re-put of an artifact the session holds refreshes it without evicting anything', async () => {
    const h = await harness({ maxArtifactsPerSession: 2 });
    h.tick();
    const same = randomBytes(KiB);
    const first = await h.service.putBytes(session('s1'), same);
    await putMany(h, session('s1'), 1);
    h.tick();
    const again = await h.service.putBytes(session('s1'), same);
    expect(again.created).toBe(false);
    expect(again.ref.id).toBe(first.ref.id);
    expect(h.events('artifact.evicted')).toEqual([]);
  });
});

describe('limits count references per scope', () => {
  it('one artifact held by two sessions counts against each of them', async () => {
    const h = await harness({ maxSessionBytes: 5 * KiB, cleanupStrategy: 'reject' });
    const shared = randomBytes(4 * KiB);
    h.tick();
    await h.service.putBytes(session('s1'), shared);
    h.tick();
    await h.service.putBytes(session('s2'), shared);
    // Each session now holds 4 of its 5 KiB: 2 more KiB fit in neither.
    for (const s of ['s1', 's2']) {
      const err = await expectArtifactError(h.service.putBytes(session(s), randomBytes(2 * KiB)), 'quota_exceeded');
      expect(err.details).toMatchObject({ usageBytes: 4 * KiB });
    }
    h.tick();
    await h.service.putBytes(session('s3'), randomBytes(2 * KiB));
  });

  it('trace limits hold across sessions of the trace, evicting from the trace', async () => {
    const h = await harness({ maxArtifactsPerTrace: 2 });
    const t = (sessionId: string): ArtifactScope => ({ tenantId: 'acme', sessionId, traceId: 't1' });
    const [a] = await putMany(h, t('s1'), 1);
    const [b] = await putMany(h, t('s2'), 1);
    const [c] = await putMany(h, t('s1'), 1);
    const trace: Access = { tenantId: 'acme', filter: { traceId: 't1' } };
    expect(await ids(h.service, trace)).toEqual([b, c].sort());
    expect(h.events('artifact.evicted')).toEqual([
      { type: 'artifact.evicted', artifactId: a, scope: { userId: '', sessionId: 's1', traceId: 't1' } },
    ]);
  });

  it('the tenant quota refuses, whatever the strategy, and never evicts other sessions', async () => {
    const h = await harness({ maxTenantBytes: 6 * KiB });
    const kept = [...(await putMany(h, session('s1'), 1, 3 * KiB)), ...(await putMany(h, session('s2'), 1, 3 * KiB))];
    const err = await expectArtifactError(h.service.putBytes(session('s3'), randomBytes(KiB)), 'quota_exceeded');
    expect(err.details).toMatchObject({
      scope: 'tenant',
      tenantId: 'acme',
      limit: 'maxTenantBytes',
      limitValue: 6 * KiB,
      usageBytes: 6 * KiB,
      neededBytes: KiB,
    });
    expect(await ids(h.service, { tenantId: 'acme', filter: {} })).toEqual(kept.sort());
    // Another tenant has its own quota.
    h.tick();
    await h.service.putBytes(session('s3', 'other'), randomBytes(KiB));
  });

  it('expired references use nothing', async () => {
    const h = await harness({ maxArtifactsPerSession: 2, cleanupStrategy: 'reject' });
    h.tick();
    await h.service.putText(session('s1'), 'short', { ttl: 5 });
    await putMany(h, session('s1'), 1);
    h.clock.t += 10_000;
    await putMany(h, session('s1'), 1);
  });

  it('per-tenant overrides replace the base policy for that tenant only', async () => {
    const h = await harness(
      { maxArtifactsPerSession: 1, cleanupStrategy: 'reject' },
      { roomy: { maxArtifactsPerSession: 3 } },
    );
    await putMany(h, session('s1', 'roomy'), 3);
    await expectArtifactError(h.service.putText(session('s1', 'roomy'), 'fourth'), 'quota_exceeded');
    await putMany(h, session('s1', 'plain'), 1);
    await expectArtifactError(h.service.putText(session('s1', 'plain'), 'second'), 'quota_exceeded');
  });
});

describe('policy configuration', () => {
  it('has the reference defaults', () => {
    const p = policiesOf(loadConfig({}))('any');
    expect(p).toEqual({
      defaultTtlSeconds: 3600,
      maxTtlSeconds: 7 * 24 * 3600,
      maxArtifactBytes: 50 * 1024 * 1024,
      maxSessionBytes: 500 * 1024 * 1024,
      maxTraceBytes: 100 * 1024 * 1024,
      maxArtifactsPerSession: 1000,
      maxArtifactsPerTrace: 100,
      maxTenantBytes: 0,
      cleanupStrategy: 'lru',
      allowNoExpiry: false,
      nameTtlSeconds: 0,
      // Rate limits are off outside production unless set.
      tenantRequestsPerSecond: 0,
      tenantRequestBurst: 0,
      tenantBytesInFlight: 0,
      tokenRequestsPerSecond: 0,
      tokenRequestBurst: 0,
      tokenBytesInFlight: 0,
    });
  });

  it('reads per-tenant overrides from ARTIFACT_STORE_TENANT_POLICIES', () => {
    const p = policiesOf(
      loadConfig({
        ARTIFACT_STORE_TENANT_POLICIES: '{"acme": {"maxSessionBytes": 1048576, "cleanupStrategy": "reject"}}',
      }),
    );
    expect(p('acme')).toMatchObject({
      maxSessionBytes: 1048576,
      cleanupStrategy: 'reject',
      maxArtifactsPerSession: 1000,
    });
    expect(p('other').maxSessionBytes).toBe(500 * 1024 * 1024);
  });

  it.each([
    [{ ARTIFACT_STORE_DEFAULT_TTL_SECONDS: '0' }, 'ARTIFACT_STORE_DEFAULT_TTL_SECONDS'],
    [{ ARTIFACT_STORE_DEFAULT_TTL_SECONDS: '-5' }, 'ARTIFACT_STORE_DEFAULT_TTL_SECONDS'],
    [
      { ARTIFACT_STORE_DEFAULT_TTL_SECONDS: '7200', ARTIFACT_STORE_MAX_TTL_SECONDS: '3600' },
      'ARTIFACT_STORE_DEFAULT_TTL_SECONDS',
    ],
    [{ ARTIFACT_STORE_MAX_TTL_SECONDS: String(400 * 366 * 24 * 3600) }, 'ARTIFACT_STORE_MAX_TTL_SECONDS'],
    [{ ARTIFACT_STORE_MAX_SESSION_BYTES: '-1' }, 'ARTIFACT_STORE_MAX_SESSION_BYTES'],
    [{ ARTIFACT_STORE_MAX_SESSION_BYTES: '0' }, 'ARTIFACT_STORE_MAX_SESSION_BYTES'],
    [{ ARTIFACT_STORE_MAX_TRACE_BYTES: '1e30' }, 'ARTIFACT_STORE_MAX_TRACE_BYTES'],
    [{ ARTIFACT_STORE_MAX_ARTIFACTS_PER_SESSION: '2.5' }, 'ARTIFACT_STORE_MAX_ARTIFACTS_PER_SESSION'],
    [{ ARTIFACT_STORE_MAX_ARTIFACTS_PER_TRACE: 'many' }, 'ARTIFACT_STORE_MAX_ARTIFACTS_PER_TRACE'],
    [{ ARTIFACT_STORE_MAX_TENANT_BYTES: '-10' }, 'ARTIFACT_STORE_MAX_TENANT_BYTES'],
    [{ ARTIFACT_STORE_CLEANUP_STRATEGY: 'random' }, 'ARTIFACT_STORE_CLEANUP_STRATEGY'],
    [{ ARTIFACT_STORE_TENANT_POLICIES: 'not json' }, 'ARTIFACT_STORE_TENANT_POLICIES'],
    [{ ARTIFACT_STORE_TENANT_POLICIES: '{"acme": {"maxSessionBytes": -1}}' }, 'ARTIFACT_STORE_TENANT_POLICIES'],
    [{ ARTIFACT_STORE_TENANT_POLICIES: '{"acme": {"maxSesionBytes": 10}}' }, 'ARTIFACT_STORE_TENANT_POLICIES'],
    [
      { ARTIFACT_STORE_TENANT_POLICIES: '{"acme": {"defaultTtlSeconds": 999999999}}' },
      'ARTIFACT_STORE_TENANT_POLICIES',
    ],
  ])('refuses to start on %j, naming %s', (env, key) => {
    expect(() => loadConfig(env)).toThrow(key);
  });

  it.each([
    [{ ARTIFACT_STORE_CLEANUP_STRATEGY: 'none' }, 'ARTIFACT_STORE_CLEANUP_STRATEGY'],
    [{ ARTIFACT_STORE_TENANT_POLICIES: '{"acme": {"cleanupStrategy": "none"}}' }, 'acme'],
  ])('refuses the strategy "none" on %j, naming both meanings, so no limits change silently', (env, where) => {
    expect(() => loadConfig(env)).toThrow(where);
    expect(() => loadConfig(env)).toThrow(/"reject".*"never"/s);
  });

  it('takes reject and never, here and per tenant', () => {
    const p = policiesOf(
      loadConfig({
        ARTIFACT_STORE_CLEANUP_STRATEGY: 'never',
        ARTIFACT_STORE_TENANT_POLICIES: '{"acme": {"cleanupStrategy": "reject"}}',
      }),
    );
    expect(p('acme').cleanupStrategy).toBe('reject');
    expect(p('other').cleanupStrategy).toBe('never');
  });
});
