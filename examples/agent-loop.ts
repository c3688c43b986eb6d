/**
 * A minimal agent loop with no LLM: a scripted planner calls real MCP tools and one native tool,
 * and prints what the model would see, before and after artifact-store, with sizes.
 *
 *   npx tsx examples/agent-loop.ts
 *
 * The tools:
 * - `tableau.download_workbook`: an MCP server (in this process, over the SDK's in-memory transport)
 *   shaped like the one in the incident. It answers with a multi-page PDF as base64 inside JSON text.
 * - `everything.get-tiny-image`: the reference server @modelcontextprotocol/server-everything, run as
 *   a child process over stdio. It answers with an image block.
 * - `query_sales`: a native tool (a plain function) that returns about 1 MB of JSON rows.
 *
 * Bytes go to an in-memory store. With ARTIFACT_STORE_URL and ARTIFACT_STORE_TOKEN set (`npm start`
 * prints both), they go to that service instead, and the refs can be downloaded from it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { createHttpArtifactStore, createInMemoryArtifactStore, type ArtifactStore } from '../src/client/index.js';
import { clampObservation, transformToolResult, wrapMcpClient } from '../src/mcp/index.js';

const scope = { tenantId: 'demo', sessionId: 'agent-loop' };

function chooseStore(): { store: ArtifactStore; where: string } {
  const url = process.env.ARTIFACT_STORE_URL;
  const token = process.env.ARTIFACT_STORE_TOKEN;
  if (url && token)
    return {
      store: createHttpArtifactStore({ baseUrl: url, token, scope: { sessionId: scope.sessionId } }),
      where: `the service at ${url}`,
    };
  return {
    store: createInMemoryArtifactStore({ scope }),
    where: 'an in-memory store (set ARTIFACT_STORE_URL and ARTIFACT_STORE_TOKEN to use a running service)',
  };
}

const PAGES = 120;

/** The report a Tableau server would export: 120 pages of figures, a few hundred KB. */
async function salesReportPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Sales Dashboard');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < PAGES; p++) {
    const page = doc.addPage([612, 792]);
    page.drawText(`Sales Dashboard, page ${p + 1} of ${PAGES}`, { x: 40, y: 750, size: 16, font });
    for (let row = 0; row < 60; row++) {
      const units = (row * 7919 + p * 104_729) % 100_000;
      page.drawText(
        `Region ${row + 1}  product ${(row * 31 + p) % 97}  units ${units}  revenue $${(units * 12.5).toFixed(2)}`,
        { x: 40, y: 720 - row * 11.5, size: 8, font },
      );
    }
  }
  return doc.save();
}

/** An MCP server shaped like the incident's: the workbook PDF as base64 inside a JSON text block. */
async function tableauLikeServer(): Promise<Client> {
  const pdf = Buffer.from(await salesReportPdf());
  const server = new McpServer({ name: 'tableau', version: '1.0.0' });
  server.registerTool('download_workbook', { description: 'Download a workbook as PDF' }, async () => ({
    content: [
      {
        type: 'text',
        text: JSON.stringify({ content: pdf.toString('base64'), name: 'Sales Dashboard', format: 'pdf' }),
      },
    ],
  }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'agent-loop', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

async function everythingServer(): Promise<Client> {
  const require = createRequire(import.meta.url);
  const entry = join(
    dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
    'dist',
    'index.js',
  );
  const client = new Client({ name: 'agent-loop', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [entry, 'stdio'], stderr: 'pipe' }));
  return client;
}

/** A native tool: a month of order rows, about 1 MB of JSON. */
function querySales(): unknown {
  const rows = Array.from({ length: 9000 }, (_, i) => ({
    orderId: `ord-${100_000 + i}`,
    region: ['EMEA', 'APAC', 'North America', 'LATAM'][i % 4],
    product: `Widget ${i % 50}`,
    units: (i * 7919) % 1000,
    revenue: ((i * 104_729) % 1_000_000) / 100,
    placedAt: new Date(Date.UTC(2026, 9, 1) + i * 287_000).toISOString(),
  }));
  return { query: 'orders in October 2026', rowCount: rows.length, rows };
}

const size = (v: unknown) => JSON.stringify(v).length.toLocaleString('en-US');
const show = (v: unknown, max = 700) => {
  const text = JSON.stringify(v, null, 2);
  return text.length > max
    ? `${text.slice(0, max)}\n  … (${(text.length - max).toLocaleString('en-US')} more chars)`
    : text;
};

async function main() {
  const { store, where } = chooseStore();
  console.log(`Artifacts go to ${where}.\n`);
  const onTransform = ({
    tool,
    artifacts,
    stats,
  }: {
    tool: string;
    artifacts: { id: string }[];
    stats: { charsBefore: number; charsAfter: number };
  }) =>
    console.log(
      `  [${tool}] ${stats.charsBefore.toLocaleString('en-US')} → ${stats.charsAfter.toLocaleString('en-US')} chars, stored: ${artifacts.map((a) => a.id).join(', ') || 'nothing'}`,
    );

  const tableauRaw = await tableauLikeServer();
  const tableau = wrapMcpClient(tableauRaw, { store, scope, onTransform });
  const everythingRaw = await everythingServer();
  const everything = wrapMcpClient(everythingRaw, { store, scope, serverName: 'everything', onTransform });

  // The planner's script: what an LLM would have decided, fixed here so the example needs no model.
  const plan: { say: string; run: () => Promise<{ raw: unknown; seen: unknown }> }[] = [
    {
      say: 'Download the Sales Dashboard workbook as PDF (Tableau)',
      run: async () => ({
        raw: await tableauRaw.callTool({ name: 'download_workbook', arguments: {} }),
        seen: await tableau.callTool({ name: 'download_workbook', arguments: {} }),
      }),
    },
    {
      say: 'Fetch a small image (server-everything)',
      run: async () => ({
        raw: await everythingRaw.callTool({ name: 'get-tiny-image', arguments: {} }),
        seen: await everything.callTool({ name: 'get-tiny-image', arguments: {} }),
      }),
    },
    {
      say: 'Query October orders (a native tool, no MCP)',
      run: async () => {
        const raw = querySales();
        const { result } = await transformToolResult('query_sales', raw, { store, scope, onEvent: () => {} });
        // The guardrail is the last line of defence for any tool's observation.
        const { observation, clamped } = await clampObservation(result, { store });
        if (clamped) console.log('  [query_sales] the guardrail clamped the observation');
        return { raw, seen: observation };
      },
    },
  ];

  let before = 0;
  let after = 0;
  for (const [i, step] of plan.entries()) {
    console.log(`Step ${i + 1}: ${step.say}`);
    const { raw, seen } = await step.run();
    // An MCP tool's failure is a result with isError, not a throw: an agent would show it to the model.
    if ((raw as { isError?: boolean }).isError) throw new Error(`${step.say}: ${JSON.stringify(raw)}`);
    before += JSON.stringify(raw).length;
    after += JSON.stringify(seen).length;
    console.log(`  without artifact-store the model reads ${size(raw)} chars`);
    console.log(`  with artifact-store it reads ${size(seen)} chars:`);
    console.log(show(seen).replace(/^/gm, '    '));
    console.log();
  }
  console.log(
    `Total observation: ${before.toLocaleString('en-US')} → ${after.toLocaleString('en-US')} chars (${((100 * after) / before).toFixed(2)}%).`,
  );
  const page = await store.list({ limit: 100 });
  console.log(
    `The store holds ${page.items.length} artifact(s): ${page.items.map((r) => `${r.id} (${r.mimeType}, ${r.sizeBytes.toLocaleString('en-US')} B)`).join('; ')}`,
  );

  await Promise.all([tableauRaw.close(), everythingRaw.close()]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
