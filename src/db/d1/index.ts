/**
 * The metadata store on Cloudflare D1, assembled from its parts. It answers exactly as the SQLite
 * repository does (same rows, ids, events, errors and details; a differential test holds the two
 * together).
 *
 * D1 has no interactive transactions, so each multi-statement write is one batch (one transaction):
 * commitPut, deleteRefs, expireRefs, enforceScope, pinBlob, dropOrUnmarkBlobs and recordAudit; endSession
 * is a batch per bounded part of the session (plans/sessions.ts). See
 * plans/put.ts for how a put decides inside its batch. Lists of ids travel as one JSON parameter
 * (json_each), since D1 takes at most 100 bound parameters per statement. The schema comes from the
 * same migrations, applied with `wrangler d1 migrations apply`; nothing migrates at runtime. No
 * online backup: D1 has Time Travel.
 */
import type { ArtifactRepository } from '../repository.js';
import { d1ApiKeys } from './api-keys.js';
import { openD1, type D1RepositoryOptions, type StatementContext } from './binding.js';
import { d1Blobs } from './blobs.js';
import { d1Names } from './names.js';
import { d1Outbox } from './outbox.js';
import { d1References } from './references.js';
import { d1Retention } from './retention.js';
import { d1Uploads } from './uploads.js';

export type {
  D1DatabaseLike,
  D1PreparedStatementLike,
  D1QueryableLike,
  D1RepositoryOptions,
  D1ResultLike,
} from './binding.js';

export type { StatementContext } from './binding.js';

/**
 * Every method but ping and close, as statements and batches run through `ctx`: D1's binding here;
 * the Postgres repository (../postgres/) runs the same ones through its pool, rewritten into its dialect.
 */
export function createStatementRepository(ctx: StatementContext): Omit<ArtifactRepository, 'ping' | 'close'> {
  return {
    ...d1References(ctx),
    ...d1Names(ctx),
    ...d1Uploads(ctx),
    ...d1ApiKeys(ctx),
    ...d1Retention(ctx),
    ...d1Blobs(ctx),
    ...d1Outbox(ctx),
  };
}

export function createD1Repository(options: D1RepositoryOptions): ArtifactRepository {
  const ctx = openD1(options);
  return {
    ...createStatementRepository(ctx),

    async ping() {
      await ctx.conn.prepare('SELECT 1').first();
    },

    // The binding belongs to the Worker's environment: nothing to close.
    async close() {},
  };
}
