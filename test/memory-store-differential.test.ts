/**
 * The SDK's in-memory store against the service, call for call: seeded random sequences of puts (a
 * few byte strings, as bytes, text, base64, data: URLs and streams, into a few scopes, with TTLs,
 * namespaces, types, names, meta and checksums), re-puts, gets, ranged streams, refs, exists,
 * deletes, listings with filters and cursors followed page by page, named versions (saves, loads,
 * ranged loads, refs, lists of versions and of names followed page by page, deletes), session ends,
 * and a fake clock crossing TTLs, run on both. Every answer must be the same: refs (ids, sizes,
 * hashes, scopes, times, names, versions), bytes, list order and pages, nulls, and the code of
 * every refusal.
 *
 * The service is the reference: the same composition as openArtifactStore({ memory: true }) (SQLite
 * in memory, the memory blob store, composeService, the embedded store), with the fake clock given
 * to the service, last-accessed written through on every read (touchFlushMs 0), and retention's
 * expiry pass run where the SDK's store runs its own (before each put).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ArtifactStore, NameRef } from '../src/client/artifact-store.js';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { composeService } from '../src/compose/compose-app.js';
import { policySettings } from '../src/compose/settings.js';
import { loadConfig } from '../src/core/config.js';
import { DEFAULT_NAMESPACE } from '../src/core/ids.js';
import { isArtifactError } from '../src/core/errors.js';
import type { ArtifactScope, ListQuery, PutOptions } from '../src/core/schemas.js';
import { openNodeDrivers } from '../src/node/drivers.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';

const SEED = 20_261_201;
const RUNS = 60;

/** The limits both sides run with. */
const LIMITS = { maxArtifactBytes: 64, defaultTtlSeconds: 60, maxTtlSeconds: 600, allowNoExpiry: true };
const START = Date.parse('2026-03-01T00:00:00Z');

// ---- The operations ----

/** The stores a sequence acts through: tenant-wide, three session-bound, trace-bound, another tenant. */
const VIEWS: ArtifactScope[] = [
  { tenantId: 't' },
  { tenantId: 't', userId: 'u1', sessionId: 's1' },
  { tenantId: 't', userId: 'u1', sessionId: 's2' },
  { tenantId: 't', userId: 'u2', sessionId: 's1' },
  { tenantId: 't', traceId: 'r1' },
  { tenantId: 'o', sessionId: 's1' },
];
const view = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(0, 1) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: VIEWS.length - 1 }) },
);
/** Names mostly from one session-bound view, so that saves, loads and lists meet. */
const nameView = fc.oneof(
  { weight: 6, arbitrary: fc.constant(1) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: VIEWS.length - 1 }) },
);
const encoder = new TextEncoder();
/** Few byte strings, so puts meet: empty, short text, binary, and one over maxArtifactBytes. */
const DATA = ['', 'hello', 'line one\nline two\n', '\u0000\u00ff binary \u0001', 'x'.repeat(65)];
const data = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(1, 2, 3) },
  { weight: 1, arbitrary: fc.constantFrom(0, 4) },
);
const HELLO_SHA256 = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';
/** An option or a filter: mostly left out, else mostly a value that is fine, now and then one that is refused. */
function sometimes<T>(fine: T[], refused: T[] = [], leftOut = 6): fc.Arbitrary<T | undefined> {
  return fc.oneof(
    { weight: leftOut, arbitrary: fc.constant(undefined) },
    ...(fine.length > 0 ? [{ weight: 3, arbitrary: fc.constantFrom(...fine) }] : []),
    ...(refused.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...refused) }] : []),
  );
}
/** A record of `sometimes` fields, with the left-out ones absent (not undefined). */
function options<T extends object>(fields: { [K in keyof T]: fc.Arbitrary<T[K] | undefined> }): fc.Arbitrary<T> {
  return fc
    .record(fields as Record<string, fc.Arbitrary<unknown>>)
    .map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T);
}
const putOptions = options<PutOptions>({
  ttl: sometimes<PutOptions['ttl']>([30, 60, 600, 'never'], [601, 0]),
  // A scope a session-bound store may name (its own parts, a trace), and ones it may not.
  scope: sometimes<PutOptions['scope']>(
    [{ traceId: 'r1' }, { sessionId: 's1', userId: 'u1' }],
    [{ sessionId: 's2' }, { tenantId: 'o' }, { userId: 'u2' }],
  ),
  namespace: sometimes(['ns.one', 'ns.two'], ['Bad NS']),
  mimeType: sometimes(['text/csv', 'application/pdf'], ['not a mime']),
  filename: sometimes(['a.txt', 'dir/b.pdf', '../../etc/passwd']),
  meta: sometimes([{ step: 1 }, { tags: ['a', 'b'] }, {}]),
  source: sometimes([{ tool: 'fetch' }]),
  // The sha256 of "hello" (right for one of the byte strings), and one no bytes here have.
  sha256: sometimes([HELLO_SHA256], ['0'.repeat(64)], 40),
});
/** An id among those the sequence was given so far (by position), one never stored, or no id at all. */
const idPick = fc.oneof(
  { weight: 8, arbitrary: fc.nat({ max: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom<number | string>('art_000000000000000000000000', 'not an id') },
);
const range = fc.option(
  fc.constantFrom({ start: 0, end: 0 }, { start: 1, end: 3 }, { start: 2, end: 1000 }, { start: 500, end: 600 }),
  { nil: undefined },
);
// Filters are rarer than put options: a listing with several of them is mostly empty.
const listQuery = options<ListQuery>({
  sessionId: sometimes(['s1', 's2'], [], 20),
  traceId: sometimes(['r1'], [], 20),
  userId: sometimes(['u1', 'u2'], [], 20),
  namespace: sometimes(['ns.one', DEFAULT_NAMESPACE], [], 20),
  mimePrefix: sometimes(['text/', 'application/'], [], 20),
  limit: sometimes([1, 2, 3], [0], 4),
  createdAfter: sometimes([new Date(START + 31_000).toISOString()], ['yesterday'], 20),
  createdBefore: sometimes([new Date(START + 31_000).toISOString()], [], 20),
  q: sometimes(['PLAN', 'a', '%', '_', 'ns.one_'], ['', 'x'.repeat(201)], 20),
  sort: sometimes(['oldest', 'largest', 'smallest', 'name'] as const, ['biggest' as never], 6),
  cursor: sometimes<string>([], ['not a cursor'], 30),
});
/** Names, mostly one; two of the others sort differently by UTF-16 and by code point (SQLite's order). */
const NAMES = ['plan.md', 'notes', '\uFFFD', '😀 avatar'];
const nameRef = fc
  .record({
    app: fc.oneof(
      { weight: 10, arbitrary: fc.constant('app') },
      { weight: 1, arbitrary: fc.constantFrom('other.app', '..') },
    ),
    name: fc.oneof(
      { weight: 3, arbitrary: fc.constant(NAMES[0]!) },
      { weight: 2, arbitrary: fc.constantFrom(...NAMES) },
    ),
    rest: options<Omit<NameRef, 'app' | 'name'>>({
      userWide: sometimes([true], [], 18),
      sessionId: sometimes(['s1', 's2'], [], 40),
      userId: sometimes(['u1', 'u2'], [], 40),
    }),
  })
  .map(({ app, name, rest }): NameRef => ({ app, name, ...rest }));
const version = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constantFrom(0, 1, 2) },
  { weight: 1, arbitrary: fc.constantFrom(5, -1) },
);
const saveOptions = options<PutOptions>({
  ttl: sometimes<PutOptions['ttl']>([30, 600, 'never'], [601]),
  mimeType: sometimes(['text/markdown'], ['not a mime']),
  filename: sometimes(['plan.md']),
  meta: sometimes([{ v: true }]),
  sha256: sometimes([HELLO_SHA256], ['0'.repeat(64)], 40),
});

/** How a put sends its bytes: putBytes, putText, putBase64 (plain, or a data: URL with a type), putStream. */
type PutKind = 'bytes' | 'text' | 'base64' | 'dataUrl' | 'stream';

type Op =
  | { op: 'put'; view: number; kind: PutKind; data: number; options: PutOptions }
  | { op: 'get' | 'getRef' | 'exists' | 'delete'; view: number; id: number | string }
  | { op: 'getStream'; view: number; id: number | string; range?: { start: number; end: number } }
  | { op: 'list'; view: number; query: ListQuery }
  | { op: 'endSession'; view: number; sessionId?: string }
  | { op: 'tick'; seconds: number }
  | { op: 'save'; view: number; ref: NameRef; data: number; as: 'text' | 'bytes' | 'stream'; options: PutOptions }
  | { op: 'load' | 'versionRef'; view: number; ref: NameRef; version?: number }
  | { op: 'loadStream'; view: number; ref: NameRef; version?: number; range?: { start: number; end: number } }
  | { op: 'listVersions' | 'deleteName'; view: number; ref: NameRef }
  | { op: 'listNames'; view: number; where: Omit<NameRef, 'name'>; limit: number };

/** Each kind of call, weighted by `weights` (0 or absent: never). */
function ops(weights: Partial<Record<keyof typeof CALLS, number>>): fc.Arbitrary<Op[]> {
  const op = fc.oneof(
    ...Object.entries(weights)
      .filter(([, weight]) => weight > 0)
      .map(([call, weight]) => ({ weight, arbitrary: CALLS[call as keyof typeof CALLS] as fc.Arbitrary<Op> })),
  );
  // Unbiased: fast-check's bias favours the last of each oneof's choices, the rarest here.
  return fc.noBias(fc.array(op, { minLength: 10, maxLength: 80 }));
}

const CALLS = {
  put: fc
    .record({
      view,
      kind: fc.constantFrom<PutKind>('bytes', 'text', 'base64', 'dataUrl', 'stream'),
      data,
      options: putOptions,
    })
    .map((o) => ({ op: 'put' as const, ...o })),
  read: fc.record({ view, id: idPick, op: fc.constantFrom('get' as const, 'getRef' as const, 'exists' as const) }),
  delete: fc.record({ view, id: idPick }).map((o) => ({ op: 'delete' as const, ...o })),
  getStream: fc
    .record({ view, id: idPick, range })
    .map(({ range, ...o }) => ({ op: 'getStream' as const, ...o, ...(range ? { range } : {}) })),
  list: fc.record({ view, query: listQuery }).map((o) => ({ op: 'list' as const, ...o })),
  endSession: fc
    .record({ view, sessionId: fc.option(fc.constantFrom('s1', 's2', '..'), { nil: undefined }) })
    .map(({ sessionId, ...o }) => ({ op: 'endSession' as const, ...o, ...(sessionId ? { sessionId } : {}) })),
  // Across TTLs: 30 and 60 s puts, 30 s saves, 600 s for both; the default TTL is 60 s.
  tick: fc.constantFrom(0, 1, 1, 29, 31, 31, 59, 61, 600).map((seconds) => ({ op: 'tick' as const, seconds })),
  save: fc
    .record({
      view: nameView,
      ref: nameRef,
      data,
      as: fc.constantFrom('text' as const, 'bytes' as const, 'stream' as const),
      options: saveOptions,
    })
    .map((o) => ({ op: 'save' as const, ...o })),
  load: fc
    .record({ view: nameView, ref: nameRef, version, op: fc.constantFrom('load' as const, 'versionRef' as const) })
    .map(({ version, ...o }) => ({ ...o, ...(version !== undefined ? { version } : {}) })),
  loadStream: fc.record({ view: nameView, ref: nameRef, version, range }).map(({ version, range, ...o }) => ({
    op: 'loadStream' as const,
    ...o,
    ...(version !== undefined ? { version } : {}),
    ...(range ? { range } : {}),
  })),
  versions: fc.record({
    view: nameView,
    ref: nameRef,
    op: fc.constantFrom('listVersions' as const, 'deleteName' as const),
  }),
  listNames: fc
    .record({ view: nameView, ref: nameRef, limit: fc.constantFrom(1, 2, 100) })
    .map(({ view, ref: { name: _name, ...where }, limit }) => ({ op: 'listNames' as const, view, where, limit })),
};

// ---- Running one sequence on both ----

/** A store per view over one shared storage, and what closes it. */
interface Side {
  views: ArtifactStore[];
  /** Before each put or save: the SDK's store removes expired references itself, the service's retention is run. */
  beforePut(): Promise<void>;
  close(): Promise<void>;
}

function sdkSide(clock: { now: number }): Side {
  const root = createInMemoryArtifactStore({ ...LIMITS, scope: VIEWS[0]!, now: () => clock.now });
  return { views: VIEWS.map((scope) => root.withScope(scope)), beforePut: async () => {}, close: async () => {} };
}

async function serviceSide(clock: { now: number }): Promise<Side> {
  const config = loadConfig({}, { ...LIMITS, allowNoExpiry: 'true', blobDriver: 'memory', touchFlushMs: 0 });
  const drivers = await openNodeDrivers(config, 'main');
  const service = composeService(config, drivers, {
    policies: policySettings(config).policies,
    now: () => clock.now,
  });
  return {
    views: VIEWS.map((scope) => createEmbeddedArtifactStore({ service, scope, persistent: false })),
    // Retention's expiry pass, where the SDK's store runs its own: at the start of every put.
    beforePut: async () => {
      await drivers.repo.expireRefs(clock.now, 1_000_000);
    },
    async close() {
      await service.close();
      await drivers.close();
    },
  };
}

type Outcome = { ok: unknown } | { refused: string };

async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await run() };
  } catch (err) {
    if (isArtifactError(err)) return { refused: err.code };
    throw err;
  }
}

const bytesOf = async (stream: ReadableStream<Uint8Array> | null) =>
  stream ? [...new Uint8Array(await new Response(stream).arrayBuffer())] : null;
const streamOf = (bytes: Uint8Array) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes);
      c.close();
    },
  });

/** Every page of a listing, following nextCursor (at most 30 pages, the cursors compared too). */
async function allPages<P extends { nextCursor?: string }>(
  first: () => Promise<P>,
  next: (cursor: string) => Promise<P>,
) {
  const pages: P[] = [await first()];
  while (pages.length < 30 && pages[pages.length - 1]!.nextCursor)
    pages.push(await next(pages[pages.length - 1]!.nextCursor!));
  return pages;
}

/** One call on one side; ids are picked from `ids`, which the side's puts extend. */
async function call(side: Side, o: Exclude<Op, { op: 'tick' }>, ids: string[]): Promise<unknown> {
  const store = side.views[o.view]!;
  const idOf = (pick: number | string) =>
    typeof pick === 'string' ? pick : (ids[pick % Math.max(ids.length, 1)] ?? 'art_000000000000000000000000');
  switch (o.op) {
    case 'put': {
      const text = DATA[o.data]!;
      const bytes = encoder.encode(text);
      const options = structuredClone(o.options);
      const ref =
        o.kind === 'bytes'
          ? await store.putBytes(bytes, options)
          : o.kind === 'text'
            ? await store.putText(text, options)
            : o.kind === 'base64'
              ? await store.putBase64(Buffer.from(bytes).toString('base64'), options)
              : o.kind === 'dataUrl'
                ? await store.putBase64(`data:image/png;base64,${Buffer.from(bytes).toString('base64')}`, options)
                : await store.putStream(streamOf(bytes), options);
      if (!ids.includes(ref.id)) ids.push(ref.id);
      return ref;
    }
    case 'get': {
      const got = await store.get(idOf(o.id));
      return got && [...got];
    }
    case 'getRef':
      return store.getRef(idOf(o.id));
    case 'exists':
      return store.exists(idOf(o.id));
    case 'delete':
      return store.delete(idOf(o.id));
    case 'getStream':
      return bytesOf(await store.getStream(idOf(o.id), o.range ? { range: o.range } : {}));
    case 'list':
      return allPages(
        () => store.list(o.query),
        (cursor) => store.list({ ...o.query, cursor }),
      );
    case 'endSession':
      return store.endSession!(o.sessionId);
    case 'save': {
      const text = DATA[o.data]!;
      const body = o.as === 'text' ? text : o.as === 'bytes' ? encoder.encode(text) : streamOf(encoder.encode(text));
      const ref = await store.names!.saveVersion(o.ref, body, structuredClone(o.options));
      // A version's id reads, lists and deletes as any artifact's.
      if (!ids.includes(ref.id)) ids.push(ref.id);
      return ref;
    }
    case 'load': {
      const loaded = await store.names!.loadVersion(o.ref, o.version);
      return loaded && { ref: loaded.ref, bytes: [...loaded.bytes] };
    }
    case 'versionRef':
      return store.names!.versionRef(o.ref, o.version);
    case 'loadStream': {
      const loaded = await store.names!.loadVersionStream(o.ref, o.version, o.range ? { range: o.range } : {});
      return loaded && { ref: loaded.ref, bytes: await bytesOf(loaded.stream) };
    }
    case 'listVersions':
      return store.names!.listVersions(o.ref);
    case 'deleteName':
      return store.names!.deleteName(o.ref);
    case 'listNames':
      return allPages(
        () => store.names!.listNames(o.where, { limit: o.limit }),
        (cursor) => store.names!.listNames(o.where, { limit: o.limit, cursor }),
      );
  }
}

/** Runs `ops` on both sides from the same clock; the first answer that differs fails, naming the step. */
async function runBoth(ops: Op[]): Promise<void> {
  const clock = { now: START };
  const sdk = sdkSide(clock);
  const service = await serviceSide(clock);
  const ids = { sdk: [] as string[], service: [] as string[] };
  try {
    for (const [step, o] of ops.entries()) {
      if (o.op === 'tick') {
        clock.now += o.seconds * 1000;
        continue;
      }
      if (o.op === 'put' || o.op === 'save') await service.beforePut();
      const expected = await outcome(() => call(service, o, ids.service));
      const actual = await outcome(() => call(sdk, o, ids.sdk));
      expect(actual, `step ${step}: ${JSON.stringify(o)}`).toEqual(expected);
    }
  } finally {
    await service.close();
    await sdk.close();
  }
}

/** A hand-written sequence first: each kind of call and its edges, before the random ones. */
const TOUR: Op[] = [
  { op: 'put', view: 1, kind: 'text', data: 1, options: { filename: 'a.txt', meta: { step: 1 } } },
  { op: 'put', view: 2, kind: 'bytes', data: 1, options: { ttl: 30 } },
  { op: 'put', view: 0, kind: 'stream', data: 2, options: { namespace: 'ns.one', mimeType: 'text/csv' } },
  { op: 'put', view: 3, kind: 'base64', data: 3, options: { ttl: 'never' } },
  { op: 'put', view: 4, kind: 'text', data: 2, options: {} },
  { op: 'put', view: 1, kind: 'text', data: 4, options: {} },
  { op: 'put', view: 1, kind: 'text', data: 1, options: { scope: { sessionId: 's2' } } },
  { op: 'put', view: 1, kind: 'text', data: 1, options: { ttl: 601 } },
  { op: 'list', view: 0, query: { limit: 2 } },
  { op: 'list', view: 0, query: { sessionId: 's1' } },
  { op: 'list', view: 1, query: { sessionId: 's2' } },
  { op: 'get', view: 2, id: 0 },
  { op: 'getStream', view: 1, id: 0, range: { start: 1, end: 3 } },
  { op: 'getStream', view: 1, id: 0, range: { start: 500, end: 600 } },
  { op: 'tick', seconds: 31 },
  { op: 'exists', view: 2, id: 0 },
  { op: 'put', view: 2, kind: 'bytes', data: 1, options: { ttl: 30 } },
  { op: 'getRef', view: 2, id: 0 },
  { op: 'save', view: 1, ref: { app: 'app', name: 'plan.md' }, data: 1, as: 'text', options: {} },
  { op: 'save', view: 1, ref: { app: 'app', name: 'plan.md' }, data: 2, as: 'bytes', options: { ttl: 30 } },
  { op: 'save', view: 1, ref: { app: 'app', name: 'notes', userWide: true }, data: 3, as: 'text', options: {} },
  { op: 'listNames', view: 1, where: { app: 'app' }, limit: 1 },
  { op: 'loadStream', view: 1, ref: { app: 'app', name: 'plan.md' }, version: 0, range: { start: 1, end: 2 } },
  { op: 'tick', seconds: 31 },
  { op: 'listVersions', view: 1, ref: { app: 'app', name: 'plan.md' } },
  { op: 'load', view: 1, ref: { app: 'app', name: 'plan.md' }, version: 1 },
  { op: 'endSession', view: 1, sessionId: 's2' },
  { op: 'endSession', view: 4, sessionId: 's1' },
  { op: 'endSession', view: 0 },
  { op: 'endSession', view: 1 },
  { op: 'listNames', view: 1, where: { app: 'app', userWide: true }, limit: 100 },
  { op: 'save', view: 1, ref: { app: 'app', name: 'plan.md' }, data: 1, as: 'text', options: {} },
  { op: 'delete', view: 0, id: 2 },
  { op: 'tick', seconds: 600 },
  { op: 'list', view: 0, query: {} },
  { op: 'deleteName', view: 1, ref: { app: 'app', name: 'plan.md' } },
  { op: 'versionRef', view: 1, ref: { app: 'app', name: 'plan.md' } },
];

describe('the in-memory store answers as the service does', () => {
  it('a hand-written tour of every call', async () => {
    await runBoth(TOUR);
  });

  it(`random sequences of every call (seed ${SEED}, ${RUNS} runs)`, async () => {
    const every = { put: 8, read: 5, delete: 2, getStream: 2, list: 4, endSession: 1, tick: 3 };
    const names = { save: 6, load: 4, loadStream: 2, versions: 2, listNames: 2 };
    await fc.assert(
      fc.asyncProperty(ops({ ...every, ...names }), (sequence) => runBoth(sequence)),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });

  it(`random sequences of named versions, with some puts (seed ${SEED}, ${RUNS} runs)`, async () => {
    const names = { save: 8, load: 6, loadStream: 3, versions: 3, listNames: 4, tick: 3, endSession: 1 };
    await fc.assert(
      fc.asyncProperty(ops({ ...names, put: 2, read: 2, list: 2, delete: 1 }), (sequence) => runBoth(sequence)),
      { seed: SEED + 1, numRuns: RUNS, endOnFailure: true },
    );
  });
});
