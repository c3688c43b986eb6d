/**
 * The TypeScript SDK against a running service: store a tool's base64 PDF, read it back whole and
 * by range, list, get a browser link, follow the event stream, delete, end the session.
 *
 *   npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
 *   export ARTIFACT_STORE_TOKEN=…
 *   npx tsx examples/sdk.ts
 *
 * ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787). In your own project the
 * import is `artifact-store-sdk`; this file imports the source so it runs from a clone.
 */
import { createHttpArtifactStore } from '../src/client/index.js';

/** What a Tableau tool returned: a PDF as one base64 string. */
const toolOutput = { content: Buffer.from('%PDF-1.4\n% a stand-in for a Tableau export\n').toString('base64') };

// #region quickstart
// Over HTTP: fetch + Web Streams only, so it runs in Node, browsers and Workers.
const store = createHttpArtifactStore({
  baseUrl: process.env.ARTIFACT_STORE_URL ?? 'http://127.0.0.1:8787',
  token: process.env.ARTIFACT_STORE_TOKEN, // or () => freshToken()
  scope: { sessionId: 's-42' }, // tenant-wide tokens only; session tokens carry their own
});

const ref = await store.putBase64(toolOutput.content, {
  // base64, base64url or a data: URL
  mimeType: 'application/pdf',
  filename: 'Sales.pdf',
  namespace: 'tableau.download_workbook',
  source: { tool: 'download_workbook' },
});
// ref → { id: 'tableau.download_workbook_3f1c…', mimeType, sizeBytes, sha256, filename, scope, expiresAt, … }

const bytes = await store.get(ref.id); // Uint8Array | null (the explicitly buffered call)
const stream = await store.getStream(ref.id, { range: { start: 0, end: 1023 } });
const page = await store.list({ namespace: 'tableau.download_workbook', limit: 50 });
await store.delete(ref.id);
// #endregion

console.log(`stored ${ref.id} (${ref.mimeType}, ${ref.sizeBytes} bytes) in session ${ref.scope.sessionId}`);
// Refusals throw an ArtifactError (code, message); null means the store holds no such artifact.
if (!bytes) throw new Error(`${ref.id} was stored, yet get answers null`);
const head = new TextDecoder().decode((await new Response(stream).arrayBuffer()).slice(0, 8));
console.log(`read back ${bytes.byteLength} bytes; the range starts with ${head}`);
const listed = page.items.some((r) => r.id === ref.id);
console.log(`listed: ${listed}; after the delete get answers ${await store.get(ref.id)}`);

const report = await store.putBase64(toolOutput.content, { mimeType: 'application/pdf', filename: 'Sales.pdf' });

// #region names
// A name that changes over time: each save is the next version (0, 1, 2…) of `plan.md` in app `my-agent`.
const plan = { app: 'my-agent', name: 'plan.md' }; // in the store's session; userWide: true for the user's
const v0 = await store.names!.saveVersion(plan, '# Plan\n1. fetch the data', { mimeType: 'text/markdown' });
const v1 = await store.names!.saveVersion(plan, '# Plan\n1. fetch the data\n2. chart it', {
  mimeType: 'text/markdown',
  meta: { step: 2 },
});
const latest = await store.names!.loadVersion(plan); // { ref, bytes } of v1, or null
const first = await store.names!.loadVersion(plan, 0);
const versions = await store.names!.listVersions(plan); // refs with name and version, oldest first
const names = await store.names!.listNames({ app: 'my-agent' }); // { items: [{ name, latestVersion, versions, … }] }
await store.names!.deleteName(plan); // every version; the next save starts again at 0
// #endregion
if (!latest || !first) throw new Error(`${plan.name} was saved, yet loadVersion answers null`);
console.log(
  `versions ${v0.version} and ${v1.version}; latest is v${latest.ref.version}, v0 has ${first.bytes.byteLength} bytes; ${versions.length} versions, names: ${names.items.map((n) => n.name).join(', ')}`,
);

// #region links
const link = await store.url!(report.id, { mode: 'direct', expiresIn: 600, disposition: 'attachment' });
// → { url, fetchMode: 'direct' | 'proxy', urlExpiresAt, mimeType, sizeBytes }
// #endregion

const fetched = await fetch(link.url);
if (!fetched.ok) throw new Error(`the link answered ${fetched.status}: ${await fetched.text()}`);
const served = (await fetched.arrayBuffer()).byteLength;
console.log(`link: ${link.fetchMode}, a browser GET answers ${fetched.status} with ${served} bytes and no token`);

// Something to watch: puts and deletes until the stream below has seen one.
let seen = false;
const producer = (async () => {
  while (!seen) {
    await new Promise((r) => setTimeout(r, 300));
    const note = await store.putText(`note ${Date.now()}`, { filename: 'note.txt' });
    await store.delete(note.id);
  }
})();

// #region events
for await (const event of store.events!()) {
  console.log(event.type, event.ref.id, event.ref.filename);
  if (event.type === 'artifact.deleted') break; // leaving the loop closes the stream
}
// #endregion
seen = true;
await producer;

await store.delete(report.id);
await store.putText('scratch notes of the session', { filename: 'scratch.txt' });

// #region end-session
// The agent's session is over: everything it still holds goes at once (user-wide names stay).
const ended = await store.endSession(); // the store's session (s-42 here), or endSession('s-43')
// → { sessionId: 's-42', refs, bytes, versions }: what went; bytes nothing holds go at the next retention run
// #endregion
console.log(`ended session ${ended.sessionId}: ${ended.refs} references, ${ended.bytes} bytes`);
