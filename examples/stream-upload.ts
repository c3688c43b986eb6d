/**
 * A large stream stored through the HTTP SDK with a file spool, so that it can go straight to the
 * bucket when the service offers direct uploads (the s3 driver), and through the service otherwise.
 * Needs a running service:
 *
 *   npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
 *   export ARTIFACT_STORE_TOKEN=…
 *   npx tsx examples/stream-upload.ts
 *
 * In your own project the imports are `artifact-store-sdk` and `artifact-store/node`.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createHttpArtifactStore } from '../src/client/index.js';
import { createFileSpool } from '../src/node.js';

const baseUrl = process.env.ARTIFACT_STORE_URL ?? 'http://127.0.0.1:8787';
const token = process.env.ARTIFACT_STORE_TOKEN;

// 9 MiB of something, over the 8 MiB where the SDK considers a direct upload.
const dir = mkdtempSync(join(tmpdir(), 'stream-upload-'));
process.chdir(dir);
writeFileSync('big.zip', randomBytes(9 * 1024 * 1024));

// #region spool
const store = createHttpArtifactStore({ baseUrl, token, spool: createFileSpool() });
const body = Readable.toWeb(createReadStream('big.zip')) as ReadableStream<Uint8Array>;
await store.putStream(body, { filename: 'big.zip' });
// #endregion

const [ref] = (await store.list({ limit: 1 })).items;
console.log(`stored ${ref!.filename}: ${ref!.sizeBytes} bytes as ${ref!.id}`);
await store.delete(ref!.id);
rmSync(dir, { recursive: true, force: true });
