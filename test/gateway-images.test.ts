/**
 * What a host sees through the gateway of images and stored text: in process, an upstream MCP server
 * (Playwright's screenshot shape, a Go SDK-style tool whose result carries an image beside
 * structuredContent and declares an outputSchema, a log dump) behind McpGateway, read by the SDK's
 * own Client, which checks results against the tools' output schemas.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { parseGatewayConfig } from '../src/mcp/gateway/config.js';
import { createMcpGateway } from '../src/mcp/gateway/gateway.js';
import * as images from './helpers/images.js';

const shot = images.pngOf(1280, 720, 40_000);
const logs = Array.from(
  { length: 3000 },
  (_, i) => `06:00:${String(i % 60).padStart(2, '0')} GET /v1/rows/${i} 200`,
).join('\n');
const structured = { url: 'https://example.com/', title: 'Example Domain' };

function upstreamServer(): Server {
  const server = new Server({ name: 'playwright-like', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: 'browser_take_screenshot', inputSchema: { type: 'object' } },
      {
        name: 'capture',
        inputSchema: { type: 'object' },
        outputSchema: {
          type: 'object',
          properties: { url: { type: 'string' }, title: { type: 'string' } },
          required: ['url'],
        },
      },
      {
        name: 'page_info',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object', properties: { url: { type: 'string' } } },
      },
      { name: 'dump_logs', inputSchema: { type: 'object' } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (req): CallToolResult => {
    const image = { type: 'image' as const, data: shot.toString('base64'), mimeType: 'image/png' };
    switch (req.params.name) {
      case 'browser_take_screenshot':
        return { content: [{ type: 'text', text: '### Result\n- [Screenshot of viewport](page.png)' }, image] };
      case 'capture':
        return { content: [image], structuredContent: structured };
      case 'page_info':
        return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
      default:
        return { content: [{ type: 'text', text: logs }] };
    }
  });
  return server;
}

let closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

async function host(artifacts: Record<string, unknown> = {}) {
  const config = parseGatewayConfig({ mcpServers: { playwright: { command: 'unused', artifacts } } });
  const gateway = createMcpGateway({
    config,
    connect: async () => {
      const [ours, theirs] = InMemoryTransport.createLinkedPair();
      const server = upstreamServer();
      await server.connect(theirs);
      closers.push(() => server.close());
      return { transport: ours };
    },
  });
  await gateway.start();
  closers.push(() => gateway.close());
  const store = createInMemoryArtifactStore({ scope: { tenantId: 'acme', sessionId: 's-1' } });
  const { server } = gateway.session({ store, key: 'local' });
  const [hostSide, gatewaySide] = InMemoryTransport.createLinkedPair();
  await server.connect(gatewaySide);
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(hostSide);
  closers.push(() => client.close());
  const call = async (name: string) => (await client.callTool({ name, arguments: {} })) as CallToolResult;
  return { client, store, call };
}

describe('images through the gateway', () => {
  it('the screenshot reaches the host as an image, with its summary, an artifact link with size and a stored copy', async () => {
    const { call, store } = await host();
    const result = await call('playwright__browser_take_screenshot');
    expect(result.content.map((b) => b.type)).toEqual(['text', 'image', 'text', 'resource_link']);
    expect(result.content[1]).toEqual({ type: 'image', data: shot.toString('base64'), mimeType: 'image/png' });
    const link = result.content[3] as { uri: string; size: number };
    expect(link.size).toBe(shot.length);
    const stored = await store.get(link.uri.slice('artifact://'.length));
    expect(Buffer.from(stored!).equals(shot)).toBe(true);
  });

  it('an image over the server’s own limits becomes a ref (artifacts.transform.images)', async () => {
    const { call } = await host({ transform: { images: { maxEdge: 1024 } } });
    const result = await call('playwright__browser_take_screenshot');
    expect(result.content.map((b) => b.type)).toEqual(['text', 'text', 'resource_link']);
    expect(JSON.stringify(result)).toContain('1280×720 px is over the 1024 px limit for images shown');
  });

  it('a tool whose image may show is listed without its outputSchema, and the host gets the image and the structure as text', async () => {
    const { client, call } = await host({ transform: { tools: { capture: { images: { inline: true } } } } });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'playwright__capture')).not.toHaveProperty('outputSchema');
    // A tool that shows no image keeps its (relaxed) schema.
    expect(tools.find((t) => t.name === 'playwright__page_info')).toHaveProperty('outputSchema');
    const result = await call('playwright__capture');
    expect(result).not.toHaveProperty('structuredContent');
    expect(result.content.map((b) => b.type)).toEqual(['image', 'text', 'resource_link', 'text']);
    expect(JSON.parse((result.content[3] as { text: string }).text)).toEqual(structured);
    const info = await call('playwright__page_info');
    expect(info.structuredContent).toEqual(structured);
  });

  it('stored text names the view tools; the instructions name them too', async () => {
    const { client, call } = await host();
    const result = await call('playwright__dump_logs');
    expect((result.content[0] as { text: string }).text).toMatch(
      /; 3,000 lines; artifact_search or artifact_read to look inside\.\n/,
    );
    expect(client.getInstructions()).toMatch(/artifact_read .*artifact_search .*artifact_query .*artifact_list/);
  });
});
