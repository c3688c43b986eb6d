/** Named versions on D1: the shared statements of plans/names.ts; a delete is one batch. */
import { deleteNamePlan, findVersionSql, listNamesSql, listVersionsSql } from '../plans/names.js';
import type { EvictedRef, NameRepository, NameSummary } from '../repository.js';
import type { StatementContext } from './binding.js';
import { toRefRow, type RawRefRow } from './rows.js';

export function d1Names({ all, batch }: StatementContext): NameRepository {
  return {
    async findVersion(key, version, now) {
      const { sql, params } = findVersionSql(key, version, now);
      const [raw] = await all<RawRefRow>(sql, params);
      return raw && toRefRow(raw);
    },

    async listVersions(key, now) {
      const { sql, params } = listVersionsSql(key, now);
      return (await all<RawRefRow>(sql, params)).map(toRefRow);
    },

    async listNames(scope, after, limit, now) {
      const { sql, params } = listNamesSql(scope, after, limit, now);
      return all<NameSummary>(sql, params);
    },

    async deleteName(key, now, version) {
      const plan = deleteNamePlan(key, now, version);
      const results = await batch(plan.stmts);
      const existed = (results[plan.existedAt]![0] as { n: number }).n > 0;
      return { existed, removed: results[plan.removedAt] as EvictedRef[] };
    },
  };
}
