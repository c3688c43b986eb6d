import { describe, expect, it, vi } from 'vitest';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { createNoOpArtifactStore } from '../src/client/noop-store.js';
import { clampObservation, type ObservationClampedEvent } from '../src/mcp/index.js';

const scope = { tenantId: 'acme', sessionId: 's-1' };
const big = () => ({
  query: 'list orders',
  total: 4000,
  orders: Array.from({ length: 4000 }, (_, i) => ({
    id: `o-${i}`,
    customer: `Customer ${i % 97}`,
    note: 'n'.repeat(20),
  })),
  report: 'r'.repeat(30_000),
});

describe('clampObservation', () => {
  it('returns an observation within budget unchanged (and JSON-safe)', async () => {
    const obs = { a: 1, when: new Date(0), list: [1, 2, 3] };
    const { observation, clamped, originalSize, finalSize } = await clampObservation(obs);
    expect(clamped).toBe(false);
    expect(observation).toEqual({ a: 1, when: '1970-01-01T00:00:00.000Z', list: [1, 2, 3] });
    expect(originalSize).toBe(finalSize);
  });

  it('stores the whole observation when a real store is configured, and returns ref + summary + preview', async () => {
    const store = createInMemoryArtifactStore({ scope });
    const events: ObservationClampedEvent[] = [];
    const obs = big();
    const { observation, clamped, originalSize, finalSize, artifact } = await clampObservation<any>(obs, {
      store,
      tool: 'orders',
      onEvent: (e) => events.push(e),
    });
    expect(clamped).toBe(true);
    expect(artifact).toMatchObject({ mimeType: 'application/json', namespace: 'observation', filename: 'orders.json' });
    expect(JSON.parse(Buffer.from((await store.get(artifact!.id))!).toString())).toEqual(obs);
    expect(observation.artifact.id).toBe(artifact!.id);
    expect(observation.summary).toContain(`stored whole as artifact ${artifact!.id}`);
    expect(observation.preview.query).toBe('list orders');
    expect(observation.preview.total).toBe(4000);
    expect(finalSize).toBeLessThanOrEqual(50_000);
    expect(finalSize).toBe(JSON.stringify(observation).length);
    expect(events).toEqual([
      { type: 'observation.clamped', originalSize, finalSize, mode: 'artifact', ref: artifact, tool: 'orders' },
    ]);
  });

  it('truncates keeping the structure when there is no real store', async () => {
    for (const store of [undefined, createNoOpArtifactStore({ warn: () => {} })]) {
      const onEvent = vi.fn();
      const { observation, clamped, finalSize, artifact } = await clampObservation<any>(big(), {
        ...(store ? { store } : {}),
        onEvent,
      });
      expect(clamped).toBe(true);
      expect(artifact).toBeUndefined();
      expect(Object.keys(observation)).toEqual(['query', 'total', 'orders', 'report']);
      expect(observation.query).toBe('list orders');
      expect(observation.report).toMatch(/^r+… \[truncated: \d+ chars\]$/);
      expect(observation.orders.at(-1)).toMatch(/^… \[\d+ more items\]$/);
      expect(observation.orders[0]).toEqual({ id: 'o-0', customer: 'Customer 0', note: 'n'.repeat(20) });
      expect(finalSize).toBeLessThanOrEqual(50_000);
      expect(JSON.stringify(observation).length).toBe(finalSize);
      expect(onEvent).toHaveBeenCalledWith(expect.objectContaining({ type: 'observation.clamped', mode: 'truncated' }));
    }
  });

  it('cuts a long string observation to the budget', async () => {
    const { observation, finalSize } = await clampObservation<string>('x'.repeat(80_000), {
      config: { maxObservationChars: 1000 },
    });
    expect(observation).toMatch(/^x+… \[truncated: \d+ chars\]$/);
    expect(finalSize).toBeLessThanOrEqual(1000);
  });

  it('holds a token budget with the counter it is given', async () => {
    const countTokens = (text: string) => text.split(/[\s,:{}"[\]]+/).filter(Boolean).length;
    const obs = { words: Array.from({ length: 5000 }, (_, i) => `word${i}`) };
    const { observation, clamped } = await clampObservation(obs, {
      countTokens,
      config: { maxObservationTokens: 300 },
    });
    expect(clamped).toBe(true);
    expect(countTokens(JSON.stringify(observation))).toBeLessThanOrEqual(300);
  });

  it('fits even a tiny budget, whatever the shape', async () => {
    const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    for (const obs of [wide, big(), [[[['z'.repeat(10_000)]]]]]) {
      const { finalSize, observation } = await clampObservation(obs, { config: { maxObservationChars: 100 } });
      expect(finalSize).toBeLessThanOrEqual(100);
      expect(JSON.stringify(observation).length).toBeLessThanOrEqual(100);
    }
  });

  it('never throws on cycles or depth', async () => {
    const cyc: any = { name: 'x' };
    cyc.self = cyc;
    let deep: any = 'leaf';
    for (let i = 0; i < 3000; i++) deep = [deep];
    for (const obs of [cyc, deep]) {
      const { observation } = await clampObservation(obs);
      expect(() => JSON.stringify(observation)).not.toThrow();
    }
  });

  it('rejects a bad config, naming the key', async () => {
    await expect(clampObservation({}, { config: { maxObservationChars: 10 } })).rejects.toThrow(/maxObservationChars/);
  });
});

describe('guardrail config', () => {
  it('refuses an unknown key by name, suggesting the closest known one', async () => {
    await expect(clampObservation({ a: 1 }, { config: { maxObservationChar: 100 } as never })).rejects.toThrow(
      'Invalid guardrail config at (root): unknown key "maxObservationChar". Did you mean "maxObservationChars"?',
    );
  });
});
