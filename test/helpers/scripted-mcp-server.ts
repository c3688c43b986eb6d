/**
 * A scripted MCP server on stdio, for gateway tests: the Tableau incident's result (a PDF as base64
 * inside JSON text), a tiny text tool, a tool that reports progress until cancelled, a tool that
 * kills its own process mid-call, a tool with an outputSchema whose structured result holds base64,
 * and a resource that changes (with subscriptions). Run: node --import tsx test/helpers/scripted-mcp-server.ts
 *
 * SCRIPTED_NAME sets the name reported at initialize; SCRIPTED_PDF is a PDF file's path;
 * SCRIPTED_PREFIX goes before every tool name; SCRIPTED_WORKBOOK is download_workbook's text.
 */
import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { PNG_1X1 } from './payloads.js';

const server = new Server(
  { name: process.env.SCRIPTED_NAME ?? 'scripted', version: '1.0.0' },
  { capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } } },
);

let counter = 0;
const subscribed = new Set<string>();
const png = Buffer.concat([PNG_1X1, Buffer.alloc(4096, 7)]);

const tools = [
  {
    name: 'get_view_as_pdf',
    description: 'Export a view as PDF (returns base64 in JSON, as the incident server did).',
    inputSchema: { type: 'object' as const, properties: { view: { type: 'string' } } },
  },
  {
    name: 'echo',
    description: 'Echo text.',
    inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } },
  },
  {
    name: 'slow',
    description: 'Reports progress every 50 ms until cancelled or `steps` are done.',
    inputSchema: { type: 'object' as const, properties: { steps: { type: 'number' } } },
  },
  {
    name: 'die',
    description: 'Exits the server process in the middle of the call.',
    inputSchema: { type: 'object' as const, properties: {} },
  },
  {
    name: 'chart',
    description: 'A chart as structured content.',
    inputSchema: { type: 'object' as const, properties: {} },
    outputSchema: {
      type: 'object' as const,
      properties: {
        title: { type: 'string' },
        image: { type: 'string', description: 'PNG, base64' },
        points: { type: 'array', items: { type: 'number' } },
      },
      required: ['title', 'image'],
      additionalProperties: false,
    },
  },
  {
    name: 'download_workbook',
    description: 'The text of SCRIPTED_WORKBOOK as one text block (the bench: a 10 MiB Tableau-shaped result).',
    inputSchema: { type: 'object' as const, properties: {} },
  },
  {
    name: 'bump',
    description: 'Changes scripted://counter and says so to subscribers.',
    inputSchema: { type: 'object' as const, properties: {} },
  },
  {
    name: 'big_text',
    description: 'Returns `chars` characters of plain log text.',
    inputSchema: { type: 'object' as const, properties: { chars: { type: 'number' } } },
  },
];

/** SCRIPTED_PREFIX is put before every tool name (to make two servers' names collide in the gateway). */
const prefix = process.env.SCRIPTED_PREFIX ?? '';
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: tools.map((t) => ({ ...t, name: prefix + t.name })),
}));

server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
  const args = (req.params.arguments ?? {}) as Record<string, unknown>;
  switch (req.params.name.slice(prefix.length)) {
    case 'get_view_as_pdf': {
      const pdf = readFileSync(process.env.SCRIPTED_PDF!);
      const body = {
        pdf_data: pdf.toString('base64'),
        view_name: String(args.view ?? 'Revenue by Region'),
        generated_at: '2026-11-26T10:00:00Z',
      };
      return { content: [{ type: 'text', text: JSON.stringify(body) }] };
    }
    case 'download_workbook':
      return { content: [{ type: 'text', text: readFileSync(process.env.SCRIPTED_WORKBOOK!, 'utf8') }] };
    case 'echo':
      return { content: [{ type: 'text', text: String(args.text ?? '') }] };
    case 'slow': {
      const steps = Number(args.steps ?? 1000);
      const token = req.params._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (extra.signal.aborted) return { content: [{ type: 'text', text: `cancelled at ${i}` }] };
        if (token !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        await new Promise((ok) => setTimeout(ok, 50));
      }
      return { content: [{ type: 'text', text: `done ${steps}` }] };
    }
    case 'die':
      setTimeout(() => process.exit(1), 100);
      return new Promise(() => {});
    case 'chart':
      return {
        content: [{ type: 'text', text: JSON.stringify({ title: 'Sales', image: png.toString('base64') }) }],
        structuredContent: { title: 'Sales', image: png.toString('base64'), points: [1, 2, 3] },
      };
    case 'bump': {
      counter++;
      if (subscribed.has('scripted://counter')) await server.sendResourceUpdated({ uri: 'scripted://counter' });
      return { content: [{ type: 'text', text: `counter ${counter}` }] };
    }
    case 'big_text': {
      const line = 'INFO request served in 12 ms from cache shard 7\n';
      const chars = Number(args.chars ?? 100_000);
      return { content: [{ type: 'text', text: line.repeat(Math.ceil(chars / line.length)).slice(0, chars) }] };
    }
    default:
      return { isError: true, content: [{ type: 'text', text: `no tool ${req.params.name}` }] };
  }
});

server.setRequestHandler(ListResourcesRequestSchema, () => ({
  resources: [
    { uri: 'scripted://counter', name: 'counter', mimeType: 'text/plain' },
    { uri: 'scripted://logo.png', name: 'logo.png', mimeType: 'image/png' },
  ],
}));

server.setRequestHandler(ReadResourceRequestSchema, (req) => {
  if (req.params.uri === 'scripted://counter')
    return { contents: [{ uri: req.params.uri, mimeType: 'text/plain', text: `counter ${counter}` }] };
  if (req.params.uri === 'scripted://logo.png')
    return { contents: [{ uri: req.params.uri, mimeType: 'image/png', blob: png.toString('base64') }] };
  throw Object.assign(new Error(`Resource not found: ${req.params.uri}`), { code: -32002 });
});

server.setRequestHandler(SubscribeRequestSchema, (req) => {
  subscribed.add(req.params.uri);
  return {};
});
server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
  subscribed.delete(req.params.uri);
  return {};
});

await server.connect(new StdioServerTransport());
