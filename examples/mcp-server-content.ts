/**
 * For people writing MCP servers: return typed content blocks or a link to stored bytes, never
 * base64 inside text. Two tools on a server in this process, called once each.
 *
 *   npx tsx examples/mcp-server-content.ts
 *
 * In your own project the imports are `artifact-store-sdk` and `artifact-store-sdk/mcp`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createInMemoryArtifactStore } from '../src/client/index.js';
import { artifactLink, toContent } from '../src/mcp/index.js';

// The server's working folder, with a chart a renderer wrote (a 1×1 PNG).
const workDir = mkdtempSync(join(tmpdir(), 'mcp-server-content-'));
mkdirSync(join(workDir, 'out'));
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
writeFileSync(join(workDir, 'out', 'chart.png'), Buffer.from(png, 'base64'));
const pdf = Buffer.from('%PDF-1.4\n% the report\n');
const store = createInMemoryArtifactStore({ scope: { tenantId: 'demo', sessionId: 's-42' } });
const server = new McpServer({ name: 'reports', version: '1.0.0' });

// #region chart-tool
server.registerTool('render_chart', { description: 'Render the sales chart' }, async () => {
  // Bytes, base64, a data: URL, a file under basePath (symlinks resolved; escapes refused) or { type, data, mimeType }
  // → ImageContent / AudioContent / EmbeddedResource blob, typed by magic bytes, then extension.
  return { content: [await toContent({ path: 'out/chart.png' }, { basePath: workDir })] };
});
// #endregion

// #region report-tool
server.registerTool('make_report', { description: 'Write the quarterly report' }, async () => {
  // Better still: put the bytes in the store and return a link, no inline base64 at all.
  const ref = await store.putBytes(pdf, { mimeType: 'application/pdf', filename: 'report.pdf' });
  return { content: [{ type: 'text', text: 'Report ready.' }, artifactLink(ref)] };
});
// #endregion

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: 'host', version: '1.0.0' });
await client.connect(clientSide);
for (const name of ['render_chart', 'make_report']) {
  const { content, isError } = await client.callTool({ name, arguments: {} });
  const blocks = content as { type: string; text?: string; mimeType?: string; uri?: string }[];
  // The server turns a tool's throw into a result with isError: the message is in its text.
  if (isError) throw new Error(`${name}: ${blocks.map((b) => b.text).join(' ')}`);
  console.log(`${name}: ${blocks.map((b) => [b.type, b.mimeType, b.uri].filter(Boolean).join(' ')).join(' | ')}`);
}
try {
  await toContent({ path: '../outside.png' }, { basePath: workDir });
} catch (err) {
  console.log(`a path outside basePath: ${(err as Error).message}`);
}
await client.close();
rmSync(workDir, { recursive: true, force: true });
