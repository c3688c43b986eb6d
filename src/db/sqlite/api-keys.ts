/** API keys on SQLite: stored with their secret's hash. */
import { and, eq, isNull } from 'drizzle-orm';
import type { ApiKeyRecord, ApiKeyRepository } from '../repository.js';
import { apiKeys } from '../schema.js';
import type { SqliteContext } from './connection.js';

export function sqliteApiKeys({ db }: SqliteContext): ApiKeyRepository {
  return {
    async createApiKey(record) {
      db.insert(apiKeys)
        .values({ ...record, revokedAt: null })
        .run();
    },

    async findApiKey(id) {
      const row = db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .get();
      return row ?? undefined;
    },

    async revokeApiKey(id, at) {
      const r = db
        .update(apiKeys)
        .set({ revokedAt: at })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .run();
      return r.changes > 0;
    },

    async listApiKeys(tenantId) {
      const rows = db
        .select({
          id: apiKeys.id,
          tenantId: apiKeys.tenantId,
          operator: apiKeys.operator,
          perms: apiKeys.perms,
          label: apiKeys.label,
          createdAt: apiKeys.createdAt,
          revokedAt: apiKeys.revokedAt,
        })
        .from(apiKeys)
        .where(tenantId ? eq(apiKeys.tenantId, tenantId) : undefined)
        .all();
      return rows as ApiKeyRecord[];
    },
  };
}
