/** Uploads in flight, on D1. */
import type { UploadRecord, UploadRepository } from '../repository.js';
import type { StatementContext } from './binding.js';

type RawUpload = Omit<UploadRecord, 'options'> & { options: string };
const UPLOAD_COLUMNS = `id, tenant_id AS tenantId, user_id AS userId, session_id AS sessionId, trace_id AS traceId,
  staging_key AS stagingKey, size_bytes AS sizeBytes, sha256, options, created_at AS createdAt, expires_at AS expiresAt,
  kind, multipart_id AS multipartId, part_size AS partSize, received_bytes AS receivedBytes`;
const toUpload = (raw: RawUpload): UploadRecord => ({
  ...raw,
  options: JSON.parse(raw.options) as Record<string, unknown>,
});

export function d1Uploads({ all, run }: StatementContext): UploadRepository {
  return {
    async createUpload(u) {
      await run(
        `INSERT INTO uploads (id, tenant_id, user_id, session_id, trace_id, staging_key, size_bytes, sha256, options,
           created_at, expires_at, kind, multipart_id, part_size, received_bytes)
         VALUES (@id, @tenantId, @userId, @sessionId, @traceId, @stagingKey, @sizeBytes, @sha256, @options,
           @createdAt, @expiresAt, @kind, @multipartId, @partSize, @receivedBytes)`,
        { ...u, options: JSON.stringify(u.options) },
      );
    },

    async findUpload(tenantId, id) {
      const sql = `SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE tenant_id = @tenantId AND id = @id`;
      const [raw] = await all<RawUpload>(sql, { tenantId, id });
      return raw ? toUpload(raw) : undefined;
    },

    async advanceUpload(id, from, to, expiresAt) {
      const done = await all<{ id: string }>(
        `UPDATE uploads SET received_bytes = @to, expires_at = @expiresAt
         WHERE id = @id AND received_bytes = @from RETURNING id`,
        { id, from, to, expiresAt },
      );
      return done.length === 1;
    },

    async deleteUpload(id) {
      await run('DELETE FROM uploads WHERE id = @id', { id });
    },

    async expiredUploads(before, limit) {
      const sql = `SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE expires_at < @before ORDER BY expires_at LIMIT @limit`;
      return (await all<RawUpload>(sql, { before, limit })).map(toUpload);
    },
  };
}
