/**
 * ResourceBridge, the host's side of MCP's lazy path for large data (`resource_link` +
 * `resources/read`), against a small files server in this process: list, read a PDF into the store,
 * try to subscribe, and the planner tools a model would be offered. examples/resources.ts does the
 * same against the reference server, with updates.
 *
 *   npx tsx examples/mcp-resources.ts
 *
 * In your own project the imports are `artifact-store-sdk` and `artifact-store-sdk/mcp`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createInMemoryArtifactStore } from '../src/client/index.js';
import { ResourceBridge, wrapMcpClient, type ResourceBridgeEvent } from '../src/mcp/index.js';

// A files server: one quarterly report as a blob resource, and a template for the others.
const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(50_000, '% Q3 figures\n')]);
const server = new McpServer({ name: 'files', version: '1.0.0' });
const readPdf = async (uri: URL) => ({
  contents: [{ uri: uri.href, mimeType: 'application/pdf', blob: pdf.toString('base64') }],
});
server.registerResource('q3', 'file:///reports/q3.pdf', { mimeType: 'application/pdf' }, readPdf);
const quarters = new ResourceTemplate('file:///reports/{quarter}.pdf', { list: undefined });
server.registerResource('report', quarters, { mimeType: 'application/pdf' }, readPdf);
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(clientSide);

const store = createInMemoryArtifactStore({ scope: { tenantId: 'demo', sessionId: 's-42' } });
const ui: ResourceBridgeEvent[] = [];

// #region bridge
const bridge = new ResourceBridge(client, { store, scope: { sessionId: 's-42' }, onEvent: (e) => ui.push(e) });
const resources = await bridge.listResources(); // every page (nextCursor), capped by maxPages
const templates = await bridge.listResourceTemplates();
const { content, artifacts, fromCache } = await bridge.readResource('file:///reports/q3.pdf');
// blobs and long text → artifacts (content holds a summary + artifact:// link); short text stays inline
await bridge.subscribe('file:///reports/q3.pdf'); // { subscribed: false, reason } if the server can't
const tools = bridge.plannerTools('files'); // files.resources_list / _read / _templates_list
const wrapped = wrapMcpClient(client, { store, resources: bridge, config: { autoReadIfSizeUnderBytes: 1 << 20 } });
// #endregion

console.log(`${resources.length} resource(s), ${templates.length} template(s)`);
const stored = artifacts.map((a) => `${a.id} (${a.mimeType}, ${a.sizeBytes} B)`).join(', ');
console.log(`read file:///reports/q3.pdf: stored ${stored}, from the cache: ${fromCache}`);
console.log(`the model sees ${JSON.stringify(content).length} chars: ${JSON.stringify(content)}`);
console.log(`read again: from the cache = ${(await bridge.readResource('file:///reports/q3.pdf')).fromCache}`);
console.log(`subscribe: ${JSON.stringify(await bridge.subscribe('file:///reports/q3.pdf'))}`);
console.log(`planner tools: ${tools.map((t) => t.name).join(', ')}`);
console.log(`the wrapped client transforms its callTool results: ${wrapped.callTool !== client.callTool}`);
console.log(`bridge events so far: ${ui.length}`);
await client.close();
