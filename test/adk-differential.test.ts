/**
 * ArtifactStoreArtifactService against ADK's own InMemoryArtifactService, call for call: a seeded
 * random sequence of saves (inlineData of random bytes and types, text, fileData, with and without
 * customMetadata, `user:` and session filenames, two apps, two users, two sessions), loads (latest,
 * given, missing and impossible versions), listArtifactKeys, listVersions, listArtifactVersions,
 * getArtifactVersion and deletes runs on both, and every answer (or refusal) must be the same.
 *
 * Ours runs over every store with named versions: in memory, embedded over SQLite, the HTTP store
 * against the service in-process, and the HTTP store against a real server on S3 (Ceph RGW) where
 * the run has one. Each fast-check run gets a fresh tenant (or store), so runs never see each other.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ArtifactVersion, InMemoryArtifactService, LogLevel, setLogLevel } from '@google/adk';
import type { Part } from '@google/genai';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactStoreArtifactService, type StoredArtifactVersion } from '../src/adk/index.js';
import { createFsBlobStore } from '../src/blob/fs.js';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createHttpArtifactStore, createInMemoryArtifactStore, createNoOpArtifactStore } from '../src/client/index.js';
import { loadConfig } from '../src/core/config.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { startServer, type RunningServer } from '../src/node.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTestBucket, describeS3, s3TestTarget } from './helpers/s3.js';

// ADK's in-memory service logs a warning for every missing version it is asked for.
setLogLevel(LogLevel.ERROR);

const SEED = 20_260_611;
const RUNS = 25;

// ---- The operations ----

const APPS = ['travel_agent', 'app.two'];
const USERS = ['alice', 'bob'];
const SESSIONS = ['s1', 's2'];
/** Few names, so saves, loads and deletes meet: session and `user:` names, a path, non-ASCII and case. */
const FILENAMES = ['report.pdf', 'Zeta.txt', 'dir/chart.png', 'notes ✓.md', 'user:profile.json', 'user:🎉 avatar.png'];

type Where = { appName: string; userId: string; sessionId: string };
type Op =
  | ({ op: 'save'; filename: string; artifact: Part; customMetadata?: Record<string, unknown> } & Where)
  | ({ op: 'load' | 'getVersion'; filename: string; version?: number } & Where)
  | ({ op: 'versions' | 'artifactVersions' | 'delete'; filename: string } & Where)
  | ({ op: 'keys' } & Where);

/** Mostly the first app and user, so calls meet each other's data; the others check isolation. */
const mostly = ([first, ...rest]: string[]) =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(first!) }, { weight: 1, arbitrary: fc.constantFrom(...rest) });
const where = fc.record({
  appName: mostly(APPS),
  userId: mostly(USERS),
  sessionId: fc.constantFrom(...SESSIONS),
});
const filename = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('report.pdf', 'user:profile.json') },
  { weight: 2, arbitrary: fc.constantFrom(...FILENAMES) },
);
/** Latest, numbers that exist in busy names, numbers that do not, and ones that can never be. */
const version = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 99, 1.5) },
);

const MIME_TYPES = [
  'image/png',
  'application/pdf',
  'application/octet-stream',
  'text/csv; charset=utf-8',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
];
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const inlinePart = fc
  .record({
    bytes: fc.uint8Array({ maxLength: 3000 }),
    // No mimeType, and one the store cannot take as it is, are kept as the part had them.
    mimeType: fc.option(fc.constantFrom(...MIME_TYPES, 'not a mime type'), { nil: undefined }),
    displayName: fc.option(fc.constantFrom('Q3 report.pdf', 'chart ✓.png'), { nil: undefined }),
  })
  .map(
    ({ bytes, mimeType, displayName }): Part => ({
      inlineData: {
        data: base64(bytes),
        ...(mimeType !== undefined ? { mimeType } : {}),
        ...(displayName !== undefined ? { displayName } : {}),
      },
    }),
  );
// Text is kept as UTF-8, so it is well-formed Unicode; a leading BOM must survive.
const textPart = fc
  .tuple(fc.boolean(), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }))
  .map(([bom, text]): Part => ({ text: bom ? `\uFEFF${text}` : text }));
const filePart = fc
  .record({
    fileUri: fc.constantFrom(
      'gs://bucket/reports/q3.pdf',
      'https://example.com/files/a%20b.png?sig=x&exp=1',
      'https://example.com/ünïcode/datei.txt',
    ),
    mimeType: fc.option(fc.constantFrom('application/pdf', 'image/png'), { nil: undefined }),
    displayName: fc.option(fc.constant('external.pdf'), { nil: undefined }),
  })
  .map(
    ({ fileUri, mimeType, displayName }): Part => ({
      fileData: {
        fileUri,
        ...(mimeType !== undefined ? { mimeType } : {}),
        ...(displayName !== undefined ? { displayName } : {}),
      },
    }),
  );
/** What both must refuse: a Part with no content, and an empty text with nothing else. */
const emptyPart = fc.constantFrom<Part>({}, { text: '' });
const part = fc.oneof(
  { arbitrary: inlinePart, weight: 4 },
  { arbitrary: textPart, weight: 3 },
  { arbitrary: filePart, weight: 2 },
  { arbitrary: emptyPart, weight: 1 },
);
/** JSON-safe metadata (the store keeps it as JSON): no -0, no undefined, no NaN. */
const jsonLeaf = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(0.5, 1e21),
);
const customMetadata = fc.option(
  fc.dictionary(
    fc.constantFrom('origin', 'tool', 'pages', 'tags', 'ünï', 'nested'),
    fc.oneof(jsonLeaf, fc.array(jsonLeaf, { maxLength: 3 }), fc.dictionary(fc.constantFrom('a', 'b'), jsonLeaf)),
    { maxKeys: 4 },
  ),
  { nil: undefined },
);

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record({ w: where, filename, artifact: part, customMetadata })
      .map(({ w, filename, artifact, customMetadata }) => ({
        op: 'save' as const,
        ...w,
        filename,
        artifact,
        ...(customMetadata !== undefined ? { customMetadata } : {}),
      })),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({ w: where, filename, version, op: fc.constantFrom('load' as const, 'getVersion' as const) })
      .map(({ w, filename, version, op }) => ({ op, ...w, filename, ...(version !== undefined ? { version } : {}) })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({ w: where, filename, op: fc.constantFrom('versions' as const, 'artifactVersions' as const) })
      .map(({ w, filename, op }) => ({ op, ...w, filename })),
  },
  { weight: 2, arbitrary: where.map((w) => ({ op: 'keys' as const, ...w })) },
  {
    weight: 1,
    arbitrary: fc.record({ w: where, filename }).map(({ w, filename }) => ({ op: 'delete' as const, ...w, filename })),
  },
);

/** A hand-written run first: every kind of call and the edges, before the random ones. */
const at = { appName: 'travel_agent', userId: 'alice', sessionId: 's1' };
const other = { ...at, sessionId: 's2' };
const TOUR: Op[] = [
  {
    op: 'save',
    ...at,
    filename: 'report.pdf',
    artifact: { inlineData: { data: base64(new Uint8Array([37, 80, 68, 70])), mimeType: 'application/pdf' } },
    customMetadata: { pages: 3 },
  },
  { op: 'save', ...at, filename: 'report.pdf', artifact: { text: '\uFEFFsecond version ✓' } },
  {
    op: 'save',
    ...at,
    filename: 'report.pdf',
    artifact: { fileData: { fileUri: 'gs://bucket/q3.pdf' } },
    customMetadata: {},
  },
  { op: 'save', ...at, filename: 'user:profile.json', artifact: { inlineData: { data: '' } } },
  {
    op: 'save',
    ...at,
    filename: 'Zeta.txt',
    artifact: { inlineData: { data: base64(new Uint8Array([1])), mimeType: 'not a mime type' } },
  },
  { op: 'save', ...at, filename: 'notes ✓.md', artifact: {} },
  { op: 'save', ...at, filename: 'notes ✓.md', artifact: { text: '' } },
  { op: 'keys', ...at },
  { op: 'keys', ...other },
  { op: 'load', ...other, filename: 'user:profile.json' },
  { op: 'load', ...other, filename: 'report.pdf' },
  { op: 'load', ...at, filename: 'report.pdf' },
  { op: 'load', ...at, filename: 'report.pdf', version: 0 },
  { op: 'load', ...at, filename: 'report.pdf', version: 1 },
  { op: 'load', ...at, filename: 'report.pdf', version: 7 },
  { op: 'load', ...at, filename: 'report.pdf', version: -1 },
  { op: 'load', ...at, filename: 'report.pdf', version: 1.5 },
  { op: 'load', ...at, filename: 'Zeta.txt' },
  { op: 'versions', ...at, filename: 'report.pdf' },
  { op: 'artifactVersions', ...at, filename: 'report.pdf' },
  { op: 'getVersion', ...at, filename: 'report.pdf' },
  { op: 'getVersion', ...at, filename: 'report.pdf', version: 2 },
  { op: 'getVersion', ...at, filename: 'report.pdf', version: 3 },
  { op: 'getVersion', ...at, filename: 'Zeta.txt' },
  { op: 'delete', ...at, filename: 'report.pdf' },
  { op: 'delete', ...at, filename: 'report.pdf' },
  { op: 'versions', ...at, filename: 'report.pdf' },
  { op: 'load', ...at, filename: 'report.pdf' },
  { op: 'save', ...at, filename: 'report.pdf', artifact: { text: 'after the delete: 0 again' } },
  { op: 'artifactVersions', ...at, filename: 'report.pdf' },
  { op: 'keys', ...at },
  { op: 'save', ...at, appName: 'app.two', filename: 'user:profile.json', artifact: { text: 'other app' } },
  { op: 'keys', ...at, userId: 'bob' },
  { op: 'keys', ...at, appName: 'app.two' },
];

// ---- Running one sequence on both ----

type Outcome = { ok: unknown } | { threw: string };
const outcome = async (run: () => Promise<unknown>): Promise<Outcome> => {
  try {
    return { ok: await run() };
  } catch (err) {
    return { threw: (err as Error).message };
  }
};

function call(service: InMemoryArtifactService | ArtifactStoreArtifactService, o: Op): Promise<unknown> {
  const { appName, userId, sessionId } = o;
  const w = { appName, userId, sessionId };
  switch (o.op) {
    case 'save':
      // Each side gets its own copy: neither may see what the other did to the Part.
      return service.saveArtifact({
        ...w,
        filename: o.filename,
        artifact: structuredClone(o.artifact),
        ...(o.customMetadata !== undefined ? { customMetadata: structuredClone(o.customMetadata) } : {}),
      });
    case 'load':
      return service.loadArtifact({ ...w, filename: o.filename, version: o.version });
    case 'getVersion':
      return service.getArtifactVersion({ ...w, filename: o.filename, version: o.version });
    case 'versions':
      return service.listVersions({ ...w, filename: o.filename });
    case 'artifactVersions':
      return service.listArtifactVersions({ ...w, filename: o.filename });
    case 'delete':
      return service.deleteArtifact({ ...w, filename: o.filename });
    case 'keys':
      return service.listArtifactKeys(w);
  }
}

/** Ours, called in ADK's newer request shape: `{ scope: { appName, userId, sessionId }, filename, … }`. */
function scopeShaped(ours: ArtifactStoreArtifactService): ArtifactStoreArtifactService {
  const reshape = ({ appName, userId, sessionId, ...rest }: Record<string, unknown>) => ({
    scope: { appName, userId, sessionId },
    ...rest,
  });
  return new Proxy(ours, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      return typeof value === 'function'
        ? (request: Record<string, unknown>) => value.call(target, reshape(request))
        : value;
    },
  });
}

const TEXT_MIME = 'text/plain; charset=utf-8';
/** The mimeType ours reports where ADK's in-memory service reports none (inlineData and text versions). */
const storedMimeOf = (part: Part) =>
  part.inlineData
    ? (part.inlineData.mimeType ?? 'application/octet-stream')
    : part.text !== undefined
      ? TEXT_MIME
      : part.fileData?.mimeType;

/**
 * Our ArtifactVersion as ADK's in-memory one would be. Only what must differ is taken out, each
 * checked first: canonicalUri (ADK's in-memory service has none; ours is `artifact://{id}` of the
 * version's content-addressed artifact, in the app's namespace), createTime (ADK 2.0's
 * ArtifactVersion has none; ours is when the version was saved), and mimeType where ADK's in-memory
 * service leaves it out (inlineData and text versions; it keeps only a fileData's): ours must then
 * be the type the part was saved as.
 */
function asAdkVersion(
  ours: StoredArtifactVersion,
  adk: ArtifactVersion,
  saved: Part,
  appName: string,
  runStart: number,
) {
  expect(ours.canonicalUri).toMatch(new RegExp(`^artifact://${appName.replace('.', '\\.')}_[0-9a-f]{24}$`));
  expect(ours.createTime).toBeGreaterThanOrEqual(Math.floor(runStart / 1000) - 1);
  expect(ours.createTime).toBeLessThanOrEqual(Date.now() / 1000 + 1);
  const { canonicalUri: _u, createTime: _t, ...rest } = ours;
  if (adk.mimeType === undefined && rest.mimeType !== undefined) {
    expect(rest.mimeType).toBe(storedMimeOf(saved));
    delete rest.mimeType;
  }
  return rest;
}

/** What the compared calls found, over a test: proof that the sequences reached real data. */
type Tally = Record<string, number>;
const count = (tally: Tally, key: string) => {
  tally[key] = (tally[key] ?? 0) + 1;
};
const found = (value: unknown) => value !== undefined && !(Array.isArray(value) && value.length === 0);

async function runBoth(ops: Op[], ours: ArtifactStoreArtifactService, tally: Tally = {}): Promise<void> {
  const adk = new InMemoryArtifactService();
  const runStart = Date.now();
  for (const [i, o] of ops.entries()) {
    const expected = await outcome(() => call(adk, o));
    const actual = await outcome(() => call(ours, o));
    const where = `call ${i}: ${JSON.stringify(o).slice(0, 300)}`;
    if ('threw' in expected || 'threw' in actual) {
      // Both refuse (the messages are each one's own: ours says what a Part may hold).
      expect('threw' in actual, `${where}\nADK: ${JSON.stringify(expected)}\nours: ${JSON.stringify(actual)}`).toBe(
        'threw' in expected,
      );
      count(tally, `${o.op} refused`);
      continue;
    }
    let got = actual.ok;
    const want = expected.ok;
    if ((o.op === 'getVersion' || o.op === 'artifactVersions') && got !== undefined) {
      const pairs =
        o.op === 'getVersion' ? [[got, want]] : (got as unknown[]).map((v, j) => [v, (want as unknown[])[j]]);
      const normalized = [];
      for (const [g, w] of pairs as [StoredArtifactVersion, ArtifactVersion | undefined][]) {
        if (w === undefined) {
          normalized.push(g);
          continue;
        }
        const saved = (await adk.loadArtifact({ ...o, version: w.version }))!;
        normalized.push(asAdkVersion(g, w, saved, o.appName, runStart));
      }
      got = o.op === 'getVersion' ? normalized[0] : normalized;
    }
    expect(got, where).toEqual(want);
    count(tally, `${o.op} ${found(want) ? 'found' : 'none'}`);
  }
}

type Backend = { name: string; service: () => Promise<ArtifactStoreArtifactService> };

function differential(backend: () => Backend) {
  it('matches ADK on the hand-written tour', async () => {
    const tally: Tally = {};
    await runBoth(TOUR, await backend().service(), tally);
    expect(tally['save refused']).toBe(2);
    expect(tally['load found']).toBe(5);
  });
  it(`matches ADK call for call on ${RUNS} random sequences (seed ${SEED})`, async () => {
    const tally: Tally = {};
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 30, maxLength: 90 }), async (ops) => {
        await runBoth(ops, await backend().service(), tally);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(`ADK differential (${backend().name}): ${JSON.stringify(tally)}`);
    // The sequences met real data: every kind of call found something, and missed something.
    for (const kind of ['load', 'getVersion', 'versions', 'artifactVersions', 'keys']) {
      expect(tally[`${kind} found`], `${kind} found`).toBeGreaterThan(5);
      expect(tally[`${kind} none`], `${kind} none`).toBeGreaterThan(0);
    }
    expect(tally['save found']).toBeGreaterThan(100);
    expect(tally['save refused']).toBeGreaterThan(0);
    expect(tally['delete none']).toBeGreaterThan(0);
  }, 240_000);
}

let tenants = 0;
const freshTenant = () => `adk-${process.pid}-${++tenants}`;

function requireNames(store: ArtifactStore, which: string): ArtifactStore {
  if (!store.capabilities.names || !store.names) throw new Error(`${which} has no named versions yet (store.names)`);
  return store;
}

describe('ADK differential: in-memory store', () => {
  differential(() => ({
    name: 'memory',
    service: async () =>
      new ArtifactStoreArtifactService(requireNames(createInMemoryArtifactStore(), 'createInMemoryArtifactStore')),
  }));
});

describe('ADK differential: requests in the scope shape', () => {
  differential(() => ({
    name: 'memory, scope-shaped requests',
    service: async () => scopeShaped(new ArtifactStoreArtifactService(createInMemoryArtifactStore())),
  }));
});

describe('ArtifactStoreArtifactService refuses what it cannot keep, and says why', () => {
  const service = () => new ArtifactStoreArtifactService(createInMemoryArtifactStore());
  const text = { text: 'hello' };

  it('an appName that cannot be the versions namespace, naming the rule', async () => {
    const save = service().saveArtifact({
      appName: 'my app',
      userId: 'u',
      sessionId: 's',
      filename: 'a.txt',
      artifact: text,
    });
    await expect(save).rejects.toThrow(
      /ADK appName "my app" cannot be an artifact-store app: it must match .*A-Za-z0-9\._-/,
    );
    await expect(service().listArtifactKeys({ appName: '', userId: 'u', sessionId: 's' })).rejects.toThrow(
      /appName ""/,
    );
  });

  it('a store without named versions', () => {
    expect(() => new ArtifactStoreArtifactService(createNoOpArtifactStore())).toThrow(/no named versions/);
  });

  it('a session filename in a request that names no session; a user: filename needs none', async () => {
    const s = service();
    const scope = { appName: 'app', userId: 'u' } as { appName: string; userId: string; sessionId: string };
    await expect(s.saveArtifact({ scope, filename: 'a.txt', artifact: text })).rejects.toThrow(
      /belongs to a session, and the request names none/,
    );
    expect(await s.saveArtifact({ scope, filename: 'user:a.txt', artifact: text })).toBe(0);
    expect(await s.listArtifactKeys({ scope })).toEqual(['user:a.txt']);
  });

  it('a Part with nothing to keep, saying what a Part may hold', async () => {
    const save = service().saveArtifact({ appName: 'app', userId: 'u', sessionId: 's', filename: 'a', artifact: {} });
    await expect(save).rejects.toThrow(/needs inlineData .*, a non-empty text, or fileData/);
  });

  it('a download link from a store that does not sign links', async () => {
    const s = service();
    await s.saveArtifact({ appName: 'app', userId: 'u', sessionId: 's', filename: 'a', artifact: text });
    await expect(s.versionUrl({ appName: 'app', userId: 'u', sessionId: 's', filename: 'a' })).rejects.toThrow(
      /does not sign download links/,
    );
  });
});

describe('ADK differential: embedded store over SQLite', () => {
  let dir: string;
  let close: () => Promise<void>;
  let service: ReturnType<typeof createArtifactService>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'adk-embedded-'));
    const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
    const blobs = createFsBlobStore({ root: join(dir, 'blobs'), fsync: false });
    service = createArtifactService({
      repo,
      blobs,
      limits: { maxArtifactBytes: 1 << 26, defaultTtlSeconds: 3600, maxTtlSeconds: 7200, touchFlushMs: 0 },
    });
    close = async () => {
      await service.close();
      await repo.close();
    };
  });
  afterAll(async () => {
    await close?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  differential(() => ({
    name: 'embedded',
    service: async () =>
      new ArtifactStoreArtifactService(
        requireNames(createEmbeddedArtifactStore({ service, scope: { tenantId: freshTenant() } }), 'embedded store'),
      ),
  }));
});

describe('ADK differential: HTTP store against the service in-process', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  differential(() => ({
    name: 'http',
    service: async () => {
      // A tenant-wide token (no sub, no session): the adapter names each call's user and session.
      const token = await t.token({ tenant: freshTenant(), perms: ['read', 'write'] });
      const store = createHttpArtifactStore({
        baseUrl: 'http://artifact-store.test',
        token,
        fetch: (input, init) => Promise.resolve(t.app.request(input instanceof Request ? input : String(input), init)),
      });
      return new ArtifactStoreArtifactService(requireNames(store, 'HTTP store'));
    },
  }));
});

const target = s3TestTarget();
describeS3('ADK differential: HTTP store against a server on S3', () => {
  let server: RunningServer;
  let dir: string;
  let dropBucket: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const made = await createTestBucket(target!, 'adk');
    dropBucket = made.cleanup;
    dir = await mkdtemp(join(tmpdir(), 'adk-s3-'));
    server = await startServer(
      loadConfig(
        {},
        {
          port: 0,
          dataDir: dir,
          logLevel: 'silent',
          env: 'test',
          blobDriver: 's3',
          s3Bucket: made.bucket,
          s3Region: target!.region,
          s3Endpoint: target!.endpoint,
          s3ForcePathStyle: target!.forcePathStyle ? 'true' : 'false',
          s3AccessKeyId: target!.accessKeyId,
          s3SecretAccessKey: target!.secretAccessKey,
          s3Prefix: 'adk/',
        },
      ),
    );
  });
  afterAll(async () => {
    await server?.close();
    await dropBucket?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  differential(() => ({
    name: 's3',
    service: async () => {
      const token = await server.mintToken({ tenant: freshTenant(), perms: ['read', 'write'] });
      return new ArtifactStoreArtifactService(
        requireNames(createHttpArtifactStore({ baseUrl: server.url, token }), 'HTTP store on S3'),
      );
    },
  }));
});
