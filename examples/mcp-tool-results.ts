/**
 * MCP tool outputs become artifacts: a Tableau-shaped MCP server returns a PDF as base64 inside
 * JSON text, and the model's copy holds a ref and a one-line summary instead. Also: the same
 * transformer on a native tool's JSON, a per-tool field spec with a summary template, and the
 * observation guardrail. No service and no LLM needed: the bytes go to an in-memory store.
 *
 *   npx tsx examples/mcp-tool-results.ts
 *
 * In your own project the imports are `artifact-store-sdk` and `artifact-store-sdk/mcp`; this file
 * imports the source so it runs from a clone.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createInMemoryArtifactStore } from '../src/client/index.js';
import { clampObservation, transformToolResult, wrapMcpClient } from '../src/mcp/index.js';

/** A stand-in for the workbook export: a PDF header and 300 KiB of content. */
const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(300_000, '% Sales Dashboard, page after page\n')]);
const workbookJson = () => JSON.stringify({ content: pdf.toString('base64'), name: 'Sales Dashboard', format: 'pdf' });

// The incident's server: the PDF as one base64 string inside a JSON text block.
const server = new McpServer({ name: 'tableau', version: '1.0.0' });
server.registerTool('download_workbook', { description: 'Download a workbook as PDF' }, async () => ({
  content: [{ type: 'text', text: workbookJson() }],
}));
const [transport, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);

const store = createInMemoryArtifactStore({ scope: { tenantId: 'demo', sessionId: 's-42' } });
const chars = (v: unknown) => JSON.stringify(v).length.toLocaleString('en-US');

// #region wrap
// Any MCP host: the SDK Client in, the same interface out; callTool results come back transformed.
const client = new Client({ name: 'my-agent', version: '1.0.0' });
const tableau = wrapMcpClient(client, { store, scope: { sessionId: 's-42' } });
await tableau.connect(transport);
const result = await tableau.callTool({ name: 'download_workbook', arguments: { workbookId: 'sales' } });
// result.content[0].text →
//   {"content":{"artifact":{"id":"tableau.download_workbook_3f1c…","mimeType":"application/pdf",
//   "sizeBytes":2411520,"sha256":"3f1c…","filename":"Sales Dashboard.pdf","source":{…}},
//   "summary":"Downloaded workbook 'Sales Dashboard' as PDF (2.3 MiB). Artifact tableau.download_workbook_3f1c…"},
//   "name":"Sales Dashboard","format":"pdf"}
// #endregion

console.log(`wrapMcpClient: the server sent ${chars(workbookJson())} chars; the model reads ${chars(result)}:`);
console.log(`  ${(result.content as { text: string }[])[0]!.text}`);

/** A raw CallToolResult, as any MCP client or a native tool returns it. */
const raw = { content: [{ type: 'text', text: workbookJson() }] };

// #region transform
// Or one call, for any raw CallToolResult or any native tool's JSON:
const options = { store, serverName: 'tableau' };
const { result: forModel, artifacts, stats } = await transformToolResult('download_workbook', raw, options);
// stats → { charsBefore: 3215402, charsAfter: 611, artifacts: 1, bytesStored: 2411520, byLayer: {…}, warnings: [] }
// #endregion

const sameBothWays = JSON.stringify(forModel) === JSON.stringify(result);
const count = (n: number) => n.toLocaleString('en-US');
console.log(`transformToolResult: ${count(stats.charsBefore)} → ${count(stats.charsAfter)} chars`);
console.log(`  ${stats.artifacts} artifact, ${artifacts[0]!.id}; same observation both ways: ${sameBothWays}`);

// #region config
const config = {
  tools: {
    export_report: {
      fields: [
        {
          path: 'files[*].data',
          filename: '{name}',
          summary: "Exported '{name}' ({size_human}). Artifact {artifact_id}",
        },
      ],
    },
  },
};
// #endregion

const csv = `region,units\n${Array.from({ length: 2000 }, (_, i) => `region-${i},${i * 7}`).join('\n')}\n`;
const report = { files: [{ name: 'q3.csv', data: Buffer.from(csv).toString('base64') }] };
const exported = await transformToolResult('export_report', report, { store, config });
console.log(`a field spec: ${JSON.stringify(exported.result)}`);

/** A native tool's output: about 1 MB of rows. */
const row = (i: number) => ({ orderId: `ord-${i}`, units: (i * 7919) % 1000, region: ['EMEA', 'APAC'][i % 2] });
const queryResult = { rows: Array.from({ length: 9000 }, (_, i) => row(i)) };

// #region clamp
// The last line of defence before anything reaches the model, MCP or not:
const guardrail = { store, config: { maxObservationChars: 50_000 } };
const { observation, clamped } = await clampObservation(queryResult, guardrail);
// #endregion

console.log(`clampObservation: ${chars(queryResult)} → ${chars(observation)} chars, clamped: ${clamped}`);
console.log(`the store holds ${(await store.list()).items.length} artifacts`);
await tableau.close();
