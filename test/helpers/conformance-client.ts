/**
 * The client the conformance suite drives (`conformance client --command …`): an SDK Client wrapped
 * by wrapMcpClient (tool results go through the transformer into an in-memory store) with a
 * ResourceBridge attached. The suite appends its server URL as the last argument and names the
 * scenario in MCP_CONFORMANCE_SCENARIO; each scenario's server says which tool it expects.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createInMemoryArtifactStore } from '../../src/client/memory-store.js';
import { ResourceBridge, wrapMcpClient } from '../../src/mcp/index.js';

const url = process.argv.at(-1)!;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
const store = createInMemoryArtifactStore();
const client = wrapMcpClient(new Client({ name: 'artifact-store-host', version: '0.1.0' }), { store });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
new ResourceBridge(client, { store });
await client.listTools();
if (scenario === 'tools_call') await client.callTool({ name: 'add_numbers', arguments: { a: 2, b: 3 } });
if (scenario === 'sse-retry') await client.callTool({ name: 'test_reconnection', arguments: {} });
await client.close();
