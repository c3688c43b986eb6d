/**
 * Property tests: real payloads (PNG, PDF, ZIP, WAV) hidden at random depths, as base64, base64url
 * or data: URLs, among look-alikes (hex digests, JWTs, long words, base64 of plain text). The
 * transformer must never throw, must come out JSON-safe, must extract exactly the payloads, and every
 * payload must round-trip byte-identical; after the guardrail, the observation is within budget.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { clampObservation, transformToolResult } from '../src/mcp/index.js';
import * as payloads from './helpers/payloads.js';

type Encoding = 'base64' | 'base64url' | 'dataUrl';
type Leaf =
  | { kind: 'payload'; index: number; encoding: Encoding }
  | { kind: 'lookalike'; text: string }
  | { kind: 'plain'; value: unknown };
type Tree = Leaf | { kind: 'object'; entries: [string, Tree][] } | { kind: 'array'; items: Tree[] };

let POOL: { bytes: Buffer; mime: string }[] = [];

beforeAll(async () => {
  POOL = [
    ...[1, 2, 3].map((seed) => ({ bytes: payloads.png(400 + seed * 97, seed), mime: 'image/png' })),
    { bytes: await payloads.pdf(1, 'One'), mime: 'application/pdf' },
    { bytes: await payloads.pdf(2, 'Two'), mime: 'application/pdf' },
    { bytes: payloads.zip({ 'a.txt': 'alpha'.repeat(80) }), mime: 'application/zip' },
    { bytes: payloads.zip({ 'b.csv': 'x,y\n'.repeat(90) }), mime: 'application/zip' },
    { bytes: payloads.wav(300), mime: 'audio/wav' },
    { bytes: payloads.wav(700), mime: 'audio/wav' },
  ];
});

const encode = (b: Buffer, e: Encoding, mime: string) =>
  e === 'base64'
    ? b.toString('base64')
    : e === 'base64url'
      ? b.toString('base64url')
      : `data:${mime};base64,${b.toString('base64')}`;

const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const lookalike = fc.oneof(
  // hex digests, alone or concatenated past the probing minimum
  fc
    .array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { minLength: 1, maxLength: 12 })
    .map((parts) => parts.map((p) => Buffer.from(p).toString('hex')).join('')),
  // JWTs
  fc
    .string({ minLength: 50, maxLength: 600 })
    .map(
      (claims) =>
        `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: claims })).toString('base64url')}.${Buffer.from(claims).toString('base64url').slice(0, 43) || 'sig'}`,
    ),
  // long words
  fc.array(fc.constantFrom(...letters), { minLength: 256, maxLength: 1500 }).map((cs) => cs.join('')),
  // base64 of plain text
  fc
    .array(fc.lorem({ maxCount: 1 }), { minLength: 60, maxLength: 200 })
    .map((words) => Buffer.from(words.join(' ')).toString('base64')),
);

const plain = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 40 }),
  // Tool results arrive as JSON, and JSON writes -0 as 0: -0 is not a value a result can hold.
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
);

const treeArb: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree; leaf: Tree }>((tie) => ({
  leaf: fc.oneof(
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('payload' as const),
        index: fc.nat({ max: 8 }),
        encoding: fc.constantFrom<Encoding>('base64', 'base64url', 'dataUrl'),
      }),
    },
    { weight: 2, arbitrary: lookalike.map((text) => ({ kind: 'lookalike' as const, text })) },
    { weight: 3, arbitrary: plain.map((value) => ({ kind: 'plain' as const, value })) },
  ),
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('leaf'),
    fc.record({
      kind: fc.constant('object' as const),
      entries: fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), tie('tree')), { maxLength: 4 }),
    }),
    fc.record({ kind: fc.constant('array' as const), items: fc.array(tie('tree'), { maxLength: 4 }) }),
  ),
})).tree;

/** Materializes a tree, returning the value and the payload indexes it holds. */
function build(tree: Tree, used: Set<number>, depthPad: number): unknown {
  switch (tree.kind) {
    case 'payload': {
      const p = POOL[tree.index]!;
      used.add(tree.index);
      let v: unknown = encode(p.bytes, tree.encoding, p.mime);
      for (let i = 0; i < depthPad; i++) v = { wrap: v };
      return v;
    }
    case 'lookalike':
      return tree.text;
    case 'plain':
      return tree.value;
    case 'object':
      // A key given twice keeps its last value, as in JSON.parse: only that one's payloads are there.
      return Object.fromEntries([...new Map(tree.entries)].map(([k, t]) => [k, build(t, used, depthPad)]));
    case 'array':
      return tree.items.map((t) => build(t, used, depthPad));
  }
}

const shapes = ['native', 'text', 'structured', 'both'] as const;

describe('transformToolResult, properties', () => {
  it('extracts exactly the embedded payloads, JSON-safe, and each round-trips', async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, fc.constantFrom(...shapes), fc.nat({ max: 30 }), async (tree, shape, depthPad) => {
        const used = new Set<number>();
        const doc = { data: build(tree, used, depthPad) };
        const raw =
          shape === 'native'
            ? doc
            : shape === 'text'
              ? { content: [{ type: 'text', text: JSON.stringify(doc) }] }
              : shape === 'structured'
                ? { content: [], structuredContent: doc }
                : { content: [{ type: 'text', text: JSON.stringify(doc) }], structuredContent: doc };
        const store = createInMemoryArtifactStore({ scope: { tenantId: 'p' } });
        // The size net is off here so that every artifact is a payload and can be counted.
        const { result, artifacts } = await transformToolResult('tool', raw, {
          store,
          config: { maxInlineChars: 1e9 },
        });

        expect(JSON.parse(JSON.stringify(result))).toEqual(result);
        const expected = new Set([...used].map((i) => createHash('sha256').update(POOL[i]!.bytes).digest('hex')));
        expect(new Set(artifacts.map((a) => a.sha256))).toEqual(expected);
        expect(artifacts).toHaveLength(expected.size);
        for (const ref of artifacts) {
          const pool = POOL.find((p) => createHash('sha256').update(p.bytes).digest('hex') === ref.sha256)!;
          expect(ref.mimeType).toBe(pool.mime);
          expect(Buffer.from((await store.get(ref.id))!).equals(pool.bytes)).toBe(true);
        }
        // Nothing base64-sized survives but the look-alikes the input held.
        const text = JSON.stringify(result);
        for (const i of used) expect(text).not.toContain(POOL[i]!.bytes.toString('base64').slice(0, 120));
      }),
      { numRuns: Number(process.env.PROP_RUNS ?? 120) },
    );
  });

  it('with the default config, the guardrail brings any result within budget', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(treeArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 200, max: 20_000 }),
        async (trees, budget) => {
          const used = new Set<number>();
          const raw = { content: trees.map((t) => ({ type: 'text', text: JSON.stringify(build(t, used, 0)) })) };
          const store = createInMemoryArtifactStore({ scope: { tenantId: 'p' } });
          const { result } = await transformToolResult('tool', raw, { store });
          for (const withStore of [true, false]) {
            const { observation, finalSize } = await clampObservation(result, {
              ...(withStore ? { store } : {}),
              config: { maxObservationChars: budget },
            });
            expect(finalSize).toBeLessThanOrEqual(budget);
            expect(JSON.stringify(observation).length).toBeLessThanOrEqual(budget);
          }
        },
      ),
      { numRuns: Number(process.env.PROP_RUNS ?? 60) },
    );
  });
});
