/**
 * How a retention run paces itself: batch sizes that follow how long each transaction took, and the
 * waits after each one (pause, busy). These tests time code that holds the event loop for a set number
 * of milliseconds, so a busy machine (a process preempted mid-transaction) skews them: they run in
 * the `node-alone` project (vitest.config.ts). The rest of retention's tests are in retention.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createPolicies } from '../src/core/policy.js';
import { BATCH_TARGET_MS, runRetention } from '../src/service/retention/index.js';
import { TEST_POLICY } from './helpers/policy.js';
import { gate, retentionHarness } from './helpers/retention-harness.js';

const BASE = TEST_POLICY;

describe('retention batch sizes', () => {
  it('unset, they double while transactions are quick, halve after a slow one, and stay within 100-10,000; set, they stay', async () => {
    const { repo, blobs } = await retentionHarness();
    const run = async (batchSize: number | undefined, slowCalls: Set<number>) => {
      const limits: number[] = [];
      const scripted = Object.create(repo) as typeof repo;
      // Full batches until 40 calls have gone by; the calls in slowCalls take longer than the target.
      scripted.expireRefs = async (_now, limit) => {
        limits.push(limit);
        if (slowCalls.has(limits.length)) await new Promise((r) => setTimeout(r, BATCH_TARGET_MS + 30));
        const refs = limits.length < 40 ? limit : 0;
        return { refs, bytes: 0, byTenant: {} };
      };
      const policies = createPolicies(TEST_POLICY);
      await runRetention({ repo: scripted, blobs, policies, graceMs: 0, ...(batchSize ? { batchSize } : {}) }, 'test');
      return limits;
    };
    const adaptive = await run(undefined, new Set([7, 8]));
    expect(adaptive.slice(0, 7)).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(adaptive.slice(7, 10)).toEqual([5000, 2500, 5000]);
    expect(Math.max(...adaptive)).toBe(10_000);
    const shrinking = await run(undefined, new Set(Array.from({ length: 40 }, (_, i) => i + 1)));
    expect(shrinking.slice(0, 5)).toEqual([500, 250, 125, 100, 100]);
    expect(new Set(await run(300, new Set([2])))).toEqual(new Set([300]));
  }, 30_000);
});

describe('retention pacing: the waits after each transaction', () => {
  it('with pause, waits as long as each transaction held the loop, and batchTargetMs bounds the batches', async () => {
    const h = await retentionHarness();
    const calls: { limit: number; began: number; ended: number }[] = [];
    const scripted = Object.create(h.repo) as typeof h.repo;
    scripted.expireRefs = async (_now, limit) => {
      const began = performance.now();
      // Holds the loop 15 ms, as a transaction would.
      while (performance.now() - began < 15) {}
      calls.push({ limit, began, ended: performance.now() });
      return { refs: calls.length < 5 ? limit : 0, bytes: 0, byTenant: {} };
    };
    await runRetention(
      {
        repo: scripted,
        blobs: h.blobs,
        policies: createPolicies(BASE),
        graceMs: 0,
        pause: 1,
        batchTargetMs: 25,
      },
      'test',
    );
    expect(calls).toHaveLength(5);
    for (let i = 1; i < calls.length; i++) {
      const held = calls[i - 1]!.ended - calls[i - 1]!.began;
      // setTimeout rounds to whole milliseconds.
      expect(calls[i]!.began - calls[i - 1]!.ended).toBeGreaterThanOrEqual(held - 1);
    }
    // 15 ms is over half of 25: no batch grew.
    expect(calls.map((c) => c.limit)).toEqual([500, 500, 500, 500, 500]);
  });

  it('with busy, makes way for puts in flight: the next transaction waits until the put is answered', async () => {
    let held: ReturnType<typeof gate> | undefined;
    const h = await retentionHarness(async (point) => {
      if (point === 'put:after-blob-commit' && held) await held.hold();
    });
    const calls: { began: number; ended: number }[] = [];
    let answeredAt = Number.NaN;
    const scripted = Object.create(h.repo) as typeof h.repo;
    scripted.expireRefs = async (_now, limit) => {
      const began = performance.now();
      if (calls.length === 0) {
        // A put begins while the first transaction holds the loop; it stops before its DB commit.
        held = gate();
        void h.service
          .putBytes({ tenantId: 'acme', sessionId: 's1' }, new TextEncoder().encode('during the run'))
          .then(() => {
            answeredAt = performance.now();
          });
      }
      while (performance.now() - began < 15) {}
      calls.push({ began, ended: performance.now() });
      return { refs: calls.length < 3 ? limit : 0, bytes: 0, byTenant: {} };
    };
    let asked = 0;
    const busy = () => {
      const inFlight = h.service.putsInFlight() > 0;
      // The run has waited on the put twice: let it finish.
      if (inFlight && ++asked === 2) held!.release();
      return inFlight;
    };
    await runRetention(
      { repo: scripted, blobs: h.blobs, policies: createPolicies(BASE), graceMs: 0, pause: 1, busy },
      'test',
    );
    expect(asked).toBeGreaterThanOrEqual(2);
    expect(calls).toHaveLength(3);
    expect(answeredAt).toBeLessThan(calls[1]!.began);
    expect(h.service.putsInFlight()).toBe(0);
  });

  it('with busy saying true throughout, each wait ends at its limit and the run goes on', async () => {
    const h = await retentionHarness();
    const calls: { began: number; ended: number }[] = [];
    const scripted = Object.create(h.repo) as typeof h.repo;
    scripted.expireRefs = async (_now, limit) => {
      const began = performance.now();
      while (performance.now() - began < 15) {}
      calls.push({ began, ended: performance.now() });
      return { refs: calls.length < 4 ? limit : 0, bytes: 0, byTenant: {} };
    };
    const report = await runRetention(
      { repo: scripted, blobs: h.blobs, policies: createPolicies(BASE), graceMs: 0, pause: 1, busy: () => true },
      'test',
    );
    expect(report.finishedAt).not.toBe('');
    expect(calls).toHaveLength(4);
    for (let i = 1; i < calls.length; i++) {
      const held = calls[i - 1]!.ended - calls[i - 1]!.began;
      // The pause (as long as the transaction) and then up to 3 times as long again for the puts.
      expect(calls[i]!.began - calls[i - 1]!.ended).toBeGreaterThanOrEqual(held + 3 * held - 2);
    }
  });
});
