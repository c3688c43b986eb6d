/**
 * The model reads back what was stored: a tool returns a 1 MB JSON and a long build log, the
 * transformer stores both and says how to look inside, and the model finds the one part it needs
 * with artifact_search, artifact_read and artifact_query, within its budget. No LLM: a scripted
 * model makes the calls. With ARTIFACT_STORE_URL and ARTIFACT_STORE_TOKEN set (from `npm start`) it
 * uses that service; otherwise it starts one in a temp folder.
 *
 *   npx tsx examples/read-back.ts
 *
 * In your own project the imports are `artifact-store-sdk`, `artifact-store-sdk/mcp` and
 * `artifact-store/node`; this file imports the source so it runs from a clone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpArtifactStore } from '../src/client/index.js';
import { artifactTools, transformToolResult } from '../src/mcp/index.js';
import { loadConfig, startServer } from '../src/node.js';

const dir = process.env.ARTIFACT_STORE_URL ? undefined : mkdtempSync(join(tmpdir(), 'read-back-'));
const server = dir
  ? await startServer(loadConfig({}, { port: 0, dataDir: dir, env: 'development', logLevel: 'silent' }))
  : undefined;
const baseUrl = server?.url ?? process.env.ARTIFACT_STORE_URL!;
const token = server?.token ?? process.env.ARTIFACT_STORE_TOKEN!;

// What two tools returned: GitHub issues (1 MB of JSON) and a CI build log of 40,000 lines.
const issues = Array.from({ length: 2000 }, (_, i) => ({
  number: 1000 + i,
  title: i === 1234 ? 'Upload hangs at 99% on large PDFs' : `Issue ${1000 + i}`,
  state: i % 3 === 0 ? 'closed' : 'open',
  body: `Steps to reproduce ${'…'.repeat(200)}`,
}));
const log = Array.from({ length: 40_000 }, (_, i) =>
  i === 18_431 ? 'ERROR tests/upload.test.ts:88 expected 201, got 503' : `[${i + 1}] ok step ${i + 1}`,
).join('\n');

// #region store
const store = createHttpArtifactStore({ baseUrl, token, scope: { sessionId: 's-42' } });
// viewTools: the host offers artifact_read / _search / _query, so summaries say how to look inside.
const options = { store, serverName: 'github', config: { viewTools: true } };
const listed = await transformToolResult(
  'list_issues',
  { content: [{ type: 'text', text: JSON.stringify(issues) }] },
  options,
);
const built = await transformToolResult(
  'get_job_logs',
  { content: [{ type: 'text', text: log }] },
  { ...options, serverName: 'ci' },
);
// built.result.content[0].text → '… 40,000 lines; artifact_search or artifact_read to look inside. …'
// #endregion
const seen = built.result as { content: { text: string }[] };
console.log(`the model reads: ${seen.content[0]!.text.slice(0, 400)}\n`);

// #region tools
// The model's tools, with their handlers: register them with your host as they are.
const tools = Object.fromEntries(artifactTools(store, { budget: 4000 }).map((t) => [t.name, t]));
const logId = built.artifacts[0]!.id;
const jsonId = listed.artifacts[0]!.id;
const found = await tools.artifact_search!.call({ id: logId, pattern: 'ERROR', context: 1 });
const around = await tools.artifact_read!.call({ id: logId, offset: 18_430, limit: 5 });
const issue = await tools.artifact_query!.call({
  id: jsonId,
  path: "$[?@.title == 'Upload hangs at 99% on large PDFs']",
});
// found.content[0].text →
//   1 line of get_job_logs.txt (text/plain, 838 KiB) matches the text "ERROR":
//    18431- [18431] ok step 18431
//    18432: ERROR tests/upload.test.ts:88 expected 201, got 503
//    18433- [18433] ok step 18433
// around.content[0].text →
//   get_job_logs.txt (text/plain, 838 KiB): lines 18,430–18,434 of 40,000
//    18430  [18430] ok step 18430   (… to 18434; a tab after each number)
//   [Lines 18,435–40,000 not shown. Continue: artifact_read {"id":"ci.get_job_logs_5b7c…","offset":18435}]
// issue.content[0].text → … $[1234] = {"number":2234,"title":"Upload hangs at 99% on large PDFs",…}
// #endregion
for (const [call, result] of [
  [`artifact_search {"id":"${logId}","pattern":"ERROR","context":1}`, found],
  [`artifact_read {"id":"${logId}","offset":18430,"limit":5}`, around],
  [`artifact_query {"id":"${jsonId}","path":"$[?@.title == 'Upload hangs at 99% on large PDFs']"}`, issue],
] as const) {
  const text = (result.content as { text: string }[])[0]!.text;
  if (result.isError) throw new Error(`${call}: ${text}`); // the tools answer a failure, they never throw
  console.log(`> ${call}\n${text.slice(0, 700)}\n`);
}

// #region sdk
// The same views from code: the answers carry the lines and the text a model would read.
const page = await store.read!(logId, { offset: 18_432, limit: 1 });
const hits = await store.search!(logId, { pattern: 'expected 201' });
const titles = await store.query!(jsonId, { path: '$[0:3].title' });
// page.lines → ['ERROR tests/upload.test.ts:88 expected 201, got 503'], page.totalLines → 40000
// hits.totalMatches → 1, hits.lines[0].line → 18432
// titles.matches → [{ path: "$[0]['title']", value: 'Issue 1000' }, …]
// #endregion
console.log(`store.read: line ${page.offset} of ${page.totalLines}: ${page.lines[0]}`);
console.log(`store.search: ${hits.totalMatches} match, line ${hits.lines[0]?.line}`);
console.log(`store.query: ${titles.matches.map((m) => `${m.path} = ${JSON.stringify(m.value)}`).join('; ')}`);

await server?.close();
if (dir) rmSync(dir, { recursive: true, force: true });
