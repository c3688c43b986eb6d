/**
 * The put's metadata commit on SQLite: the statement plan D1 runs as one batch (plans/put.ts), run
 * here statement by statement inside one immediate transaction. So there is one quota decision, in
 * SQL, for both backends. Unlike a batch, this runner stops at the verdict: a refused put throws
 * and rolls back, and its later statements never run.
 *
 * Measured against the JavaScript decision it replaced (20k puts into a WAL file, synchronous=FULL,
 * median of 7 paired runs): 1.09 ms against 1.51 ms a put with lru evicting on every put, 0.39 ms
 * against 1.07 ms without quotas. Each statement here is prepared once; the drizzle queries it
 * replaced were prepared on every call.
 */
import type Database from 'better-sqlite3';
import { commitPutPlan, putRefusal, type PutVerdict } from '../plans/put.js';
import type { CommitPutInput, EvictedRef, RefRow, ReferenceRepository } from '../repository.js';
import type { SqliteContext } from './connection.js';
import { parseJson, type RawRefRow } from './rows.js';

type PutResult = { row: RefRow; created: boolean; evicted: EvictedRef[] };

export function createCommitPut({ sqlite, writing }: SqliteContext): ReferenceRepository['commitPut'] {
  // One statement per SQL text: a plan's text depends only on which limits apply, so there are few.
  const prepared = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    let stmt = prepared.get(sql);
    if (!stmt) {
      stmt = sqlite.prepare(sql);
      prepared.set(sql, stmt);
    }
    return stmt;
  };

  const commit = sqlite.transaction((input: CommitPutInput): PutResult => {
    // Read the clock once the write lock is held: times then follow commit order, also across
    // processes, which is the order LRU and FIFO eviction rank by.
    const now = input.clock ? Math.max(input.now, input.clock()) : input.now;
    const plan = commitPutPlan(input, now, input.expiresAt + (now - input.now), false);
    const results: unknown[][] = [];
    for (const { sql, params } of plan.stmts) {
      const stmt = prepare(sql);
      if (stmt.reader) {
        results.push(stmt.all(params));
      } else {
        stmt.run(params);
        results.push([]);
      }
      if (results.length - 1 === plan.at.verdict) {
        const refusal = putRefusal(input, plan.limits, results[plan.at.verdict]![0] as PutVerdict);
        if (refusal) throw refusal;
      }
    }
    const verdict = results[plan.at.verdict]![0] as PutVerdict;
    const raw = results[plan.at.row]![0] as RawRefRow | undefined;
    if (!raw) throw new Error('The put was accepted but its reference is missing');
    const evicted = plan.at.evicted === undefined ? [] : (results[plan.at.evicted] as EvictedRef[]);
    return {
      row: { ...raw, meta: parseJson(raw.meta), source: parseJson(raw.source) },
      created: !verdict.live,
      evicted,
    };
  });

  return async (input) => writing(() => commit.immediate(input));
}
