/**
 * The drivers under the shared HTTP suite in workerd (vitest.config.ts's workerd project aliases
 * drivers.ts to this file): D1 and R2 bindings from wrangler.toml, hashed with crypto.DigestStream,
 * wired as src/worker.ts wires them.
 */
import { env } from '../workerd/bindings.js';
import { digestStreamSha256 } from '../../src/blob/digest-stream-hash.js';
import { createR2BlobStore } from '../../src/blob/r2.js';
import { createD1Repository } from '../../src/db/d1.js';

export const RUNTIME: 'node' | 'workerd' = 'workerd';

/** Tables the migrations made, minus wrangler's and SQLite's bookkeeping. */
async function dataTables(): Promise<string[]> {
  const { results = [] } = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name != 'd1_migrations'").all<{ name: string }>();
  return results.map((r) => r.name);
}

let n = 0;

/** `manualClock`: the test drives the service's clock by hand, so puts take their time from it, not from D1's. */
export async function openTestDrivers(options: { manualClock?: boolean } = {}) {
  // Each app starts on empty storage, as on Node (a fresh SQLite file and blob folder). The workerd
  // project runs one file at a time, so emptying the tables touches no other test.
  await env.DB.batch((await dataTables()).map((t) => env.DB.prepare(`DELETE FROM "${t}"`)));
  const prefix = `t${Date.now().toString(36)}-${n++}/`;
  const blobs = createR2BlobStore({ bucket: env.BLOBS, hash: digestStreamSha256, prefix });
  const keys = async () => {
    const out: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await env.BLOBS.list({ prefix, ...(cursor ? { cursor } : {}) });
      out.push(...page.objects.map((o) => o.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    return out;
  };
  return {
    repo: createD1Repository({ db: env.DB, clock: options.manualClock ? 'caller' : 'database' }),
    blobs,
    /** Stored objects (committed blobs and leftover staging) under this app's prefix. */
    blobFiles: keys,
    cleanup: async () => {
      const left = await keys();
      if (left.length > 0) await env.BLOBS.delete(left);
    },
  };
}
