/** Uploads in flight, on SQLite. */
import { and, eq, lt } from 'drizzle-orm';
import type { UploadRecord, UploadRepository } from '../repository.js';
import { uploads } from '../schema.js';
import type { SqliteContext } from './connection.js';

export function sqliteUploads({ db }: SqliteContext): UploadRepository {
  return {
    async createUpload(upload) {
      db.insert(uploads).values(upload).run();
    },

    async findUpload(tenantId, id) {
      return (
        db
          .select()
          .from(uploads)
          .where(and(eq(uploads.tenantId, tenantId), eq(uploads.id, id)))
          .get() ?? undefined
      );
    },

    async advanceUpload(id, from, to, expiresAt) {
      const done = db
        .update(uploads)
        .set({ receivedBytes: to, expiresAt })
        .where(and(eq(uploads.id, id), eq(uploads.receivedBytes, from)))
        .run();
      return done.changes === 1;
    },

    async deleteUpload(id) {
      db.delete(uploads).where(eq(uploads.id, id)).run();
    },

    async expiredUploads(before, limit) {
      const rows = db
        .select()
        .from(uploads)
        .where(lt(uploads.expiresAt, before))
        .orderBy(uploads.expiresAt)
        .limit(limit)
        .all();
      return rows as UploadRecord[];
    },
  };
}
