/** API keys on D1: stored with their secret's hash. */
import type { ApiKeyRecord, ApiKeyRepository } from '../repository.js';
import type { StatementContext } from './binding.js';

type RawApiKey = Omit<ApiKeyRecord, 'perms'> & { perms: string };
const API_KEY_COLUMNS = `id, tenant_id AS tenantId, operator, perms, label, created_at AS createdAt,
  revoked_at AS revokedAt`;

export function d1ApiKeys({ all, run }: StatementContext): ApiKeyRepository {
  return {
    async createApiKey(k) {
      const sql = `INSERT INTO api_keys (id, tenant_id, operator, secret_hash, perms, label, created_at, revoked_at)
        VALUES (@id, @tenantId, @operator, @secretHash, @perms, @label, @createdAt, NULL)`;
      await run(sql, {
        id: k.id,
        tenantId: k.tenantId,
        operator: k.operator,
        secretHash: k.secretHash,
        perms: JSON.stringify(k.perms),
        label: k.label,
        createdAt: k.createdAt,
      });
    },

    async findApiKey(id) {
      const sql = `SELECT ${API_KEY_COLUMNS}, secret_hash AS secretHash FROM api_keys WHERE id = @id AND revoked_at IS NULL`;
      const [raw] = await all<RawApiKey & { secretHash: string }>(sql, { id });
      return raw ? { ...raw, operator: Boolean(raw.operator), perms: JSON.parse(raw.perms) as string[] } : undefined;
    },

    async revokeApiKey(id, at) {
      return (await run('UPDATE api_keys SET revoked_at = @at WHERE id = @id AND revoked_at IS NULL', { id, at })) > 0;
    },

    async listApiKeys(tenantId) {
      const where = tenantId ? 'WHERE tenant_id = @tenantId' : '';
      const rows = await all<RawApiKey>(`SELECT ${API_KEY_COLUMNS} FROM api_keys ${where}`, { tenantId });
      return rows.map((r) => ({ ...r, operator: Boolean(r.operator), perms: JSON.parse(r.perms) as string[] }));
    },
  };
}
