/**
 * The service as an MCP server over Streamable HTTP: list the caller's artifacts as resources, read
 * one, and ask for a download link with the artifact_url tool. Needs a running service:
 *
 *   npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
 *   export ARTIFACT_STORE_TOKEN=…
 *   npx tsx examples/mcp-http.ts
 *
 * ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHttpArtifactStore } from '../src/client/index.js';

const baseUrl = process.env.ARTIFACT_STORE_URL ?? 'http://127.0.0.1:8787';
const token = process.env.ARTIFACT_STORE_TOKEN;
const store = createHttpArtifactStore({ baseUrl, token, scope: { sessionId: 's-42' } });
const ref = await store.putText('{"rows": [1, 2, 3]}', { mimeType: 'application/json', filename: 'rows.json' });

// #region connect
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }),
);
const { resources } = await client.listResources();
// #endregion

console.log(`resources: ${resources.map((r) => `${r.uri} (${r.mimeType})`).join(', ')}`);
const read = await client.readResource({ uri: `artifact://${ref.id}` });
console.log(`read artifact://${ref.id}: ${JSON.stringify(read.contents[0])}`);
const link = await client.callTool({ name: 'artifact_url', arguments: { id: ref.id } });
const text = (link.content as { text: string }[])[0]!.text;
if (link.isError) throw new Error(`artifact_url: ${text}`); // a refusal comes back as a result, not a throw
console.log(`artifact_url: ${text.slice(0, 60)}…`);
await client.close();
await store.delete(ref.id);
