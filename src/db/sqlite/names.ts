/** Named versions on SQLite: the shared statements of plans/names.ts; a delete runs in one transaction. */
import type Database from 'better-sqlite3';
import { deleteNamePlan, findVersionSql, listNamesSql, listVersionsSql } from '../plans/names.js';
import type { EvictedRef, NameRepository, NameSummary } from '../repository.js';
import type { SqliteContext } from './connection.js';
import { parseJson, type RawRefRow } from './rows.js';

export function sqliteNames({ sqlite, writing }: SqliteContext): NameRepository {
  const prepared = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let stmt = prepared.get(sql);
    if (!stmt) {
      stmt = sqlite.prepare(sql);
      prepared.set(sql, stmt);
    }
    return stmt;
  };
  const parsed = (raw: RawRefRow) => ({ ...raw, meta: parseJson(raw.meta), source: parseJson(raw.source) });

  return {
    async findVersion(key, version, now) {
      const { sql, params } = findVersionSql(key, version, now);
      const raw = prepare(sql).get(params) as RawRefRow | undefined;
      return raw && parsed(raw);
    },

    async listVersions(key, now) {
      const { sql, params } = listVersionsSql(key, now);
      return (prepare(sql).all(params) as RawRefRow[]).map(parsed);
    },

    async listNames(scope, after, limit, now) {
      const { sql, params } = listNamesSql(scope, after, limit, now);
      return prepare(sql).all(params) as NameSummary[];
    },

    async deleteName(key, now, version) {
      const plan = deleteNamePlan(key, now, version);
      return writing(() =>
        sqlite
          .transaction(() => {
            const results = plan.stmts.map(({ sql, params }) => {
              const stmt = prepare(sql);
              if (stmt.reader) return stmt.all(params);
              stmt.run(params);
              return [];
            });
            const existed = (results[plan.existedAt]![0] as { n: number }).n > 0;
            return { existed, removed: results[plan.removedAt] as EvictedRef[] };
          })
          .immediate(),
      );
    },
  };
}
