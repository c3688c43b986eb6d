/**
 * Retention on SQLite: expiry, bringing sessions and traces within their quotas, orphaned artifacts,
 * and the reports of past runs. Each write is one bounded immediate transaction.
 */
import type Database from 'better-sqlite3';
import { desc } from 'drizzle-orm';
import { ARTIFACT_WINDOW_SQL, DROP_UNREFERENCED_WINDOW_SQL, windowNext } from '../blob-sql.js';
import { CLAIM_LEASE, RELEASE_LEASE, scopeEviction } from '../plans/sql.js';
import { expirePlan } from '../plans/removal.js';
import type { EvictedRef, RetentionRepository, ScopeUsage } from '../repository.js';
import { retentionRuns } from '../schema.js';
import { scopesOverSql, tallyByTenant } from '../usage-sql.js';
import type { SqliteContext } from './connection.js';
import { REMOVED_COLUMNS, type RemovedRow } from './rows.js';

const SCOPE_COLUMNS = { session: 'session_id', trace: 'trace_id' } as const;
type ScopeKind = keyof typeof SCOPE_COLUMNS;

export function sqliteRetention({ sqlite, db, writing, removal, runPlan }: SqliteContext): RetentionRepository {
  /**
   * Eviction of one session or trace, as one statement: rank the scope's live references, most
   * recently accessed (lru) or created (fifo) first, keep the longest run that fits both limits
   * (@maxBytes, @maxCount; 0 = none), delete the rest.
   */
  const evictStatements = new Map<string, Database.Statement>();
  function evictStatement(kind: ScopeKind, strategy: 'lru' | 'fifo'): Database.Statement {
    const key = `${kind}:${strategy}`;
    let stmt = evictStatements.get(key);
    if (!stmt) {
      const recency = strategy === 'lru' ? 'last_accessed_at' : 'created_at';
      stmt = sqlite.prepare(`
        DELETE FROM artifact_refs WHERE ref_id IN (
          SELECT ref_id FROM (
            SELECT ref_id, sum(size_bytes) OVER w AS running, row_number() OVER w AS position
            FROM artifact_refs
            WHERE tenant_id = @tenantId AND ${SCOPE_COLUMNS[kind]} = @value AND expires_at > @now AND name = ''
            WINDOW w AS (ORDER BY ${recency} DESC, ref_id DESC ROWS UNBOUNDED PRECEDING)
          )
          WHERE (@maxBytes > 0 AND running > @maxBytes) OR (@maxCount > 0 AND position > @maxCount)
        )
        RETURNING ${REMOVED_COLUMNS}`);
      evictStatements.set(key, stmt);
    }
    return stmt;
  }
  const scopesOverStatements = Object.fromEntries(
    (Object.keys(SCOPE_COLUMNS) as ScopeKind[]).map((kind) => {
      const sql = scopesOverSql(SCOPE_COLUMNS[kind]);
      return [
        kind,
        {
          windowEnd: sqlite.prepare(sql.windowEnd),
          page: sqlite.prepare(sql.page),
          lastPage: sqlite.prepare(sql.lastPage),
        },
      ];
    }),
  ) as Record<ScopeKind, Record<'windowEnd' | 'page' | 'lastPage', Database.Statement>>;
  const artifactWindow = sqlite.prepare(ARTIFACT_WINDOW_SQL);
  const unreferencedArtifacts = sqlite.prepare(DROP_UNREFERENCED_WINDOW_SQL);

  return {
    async expireRefs(now, limit) {
      // Set-based, as on D1: the events are built in SQL, with no row crossing into JavaScript but
      // the removed references' tallies.
      const plan = expirePlan(now, limit);
      const gone = runPlan(plan.stmts)[plan.removedAt] as EvictedRef[];
      return { refs: gone.length, bytes: gone.reduce((sum, r) => sum + r.sizeBytes, 0), byTenant: tallyByTenant(gone) };
    },

    async scopesOver(kind, now, minCount, minBytes, after, rows) {
      const statements = scopesOverStatements[kind];
      const from = { afterTenant: after?.tenantId ?? '', afterValue: after?.value ?? '' };
      // One read transaction: the window's end and its sums see the same rows.
      return sqlite.transaction(() => {
        const end = statements.windowEnd.get({ ...from, rows }) as { tenantId: string; value: string } | undefined;
        const params = { ...from, now, minCount, minBytes };
        const scopes = (
          end
            ? statements.page.all({ ...params, endTenant: end.tenantId, endValue: end.value })
            : statements.lastPage.all(params)
        ) as ScopeUsage[];
        return { scopes, next: end ?? null };
      })();
    },

    async enforceScope(tenantId, kind, value, quota, now) {
      const eviction = scopeEviction(kind, quota);
      if (!eviction) return [];
      const { strategy, maxBytes, maxCount } = eviction;
      return writing(() =>
        sqlite
          .transaction(() => {
            const evicted = evictStatement(kind, strategy).all({
              tenantId,
              value,
              now,
              maxBytes,
              maxCount,
            }) as RemovedRow[];
            removal.recordRemoved(evicted, 'artifact.evicted', now);
            return evicted;
          })
          .immediate(),
      );
    },

    async dropUnreferencedArtifacts(after, limit) {
      return writing(() =>
        sqlite
          .transaction(() => {
            const window = artifactWindow.get({ after, limit }) as { n: number; last: number | null };
            const dropped = unreferencedArtifacts.run({ after, limit }).changes;
            return { dropped, next: windowNext(window, limit) };
          })
          .immediate(),
      );
    },

    async recordRetentionRun(run) {
      db.insert(retentionRuns).values(run).run();
    },

    async retentionRuns(limit) {
      return db
        .select()
        .from(retentionRuns)
        .orderBy(desc(retentionRuns.startedAt), desc(retentionRuns.id))
        .limit(limit)
        .all();
    },

    async claimLease(name, holder, until, now) {
      return writing(() => sqlite.prepare(CLAIM_LEASE).run({ name, holder, until, now }).changes > 0);
    },

    async releaseLease(name, holder) {
      writing(() => sqlite.prepare(RELEASE_LEASE).run({ name, holder }));
    },
  };
}
