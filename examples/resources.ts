/**
 * A host reading an MCP server's resources through ResourceBridge: list every page, read (blobs
 * and long text go to the store), answer repeat reads from the cache, and drop a cached read when
 * the server says the resource changed. Also prints the planner tools a model would be offered.
 *
 *   npx tsx examples/resources.ts
 *
 * The server is the reference one, @modelcontextprotocol/server-everything, run over stdio.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createInMemoryArtifactStore } from '../src/client/index.js';
import { ResourceBridge } from '../src/mcp/index.js';

async function main() {
  const entry = join(
    dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
    'dist',
    'index.js',
  );
  const client = new Client({ name: 'resources-example', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [entry, 'stdio'], stderr: 'pipe' }));

  const store = createInMemoryArtifactStore({ scope: { tenantId: 'demo', sessionId: 'resources' } });
  const updates: string[] = [];
  const bridge = new ResourceBridge(client, {
    store,
    onEvent: (e) => {
      if (e.type === 'resource.updated') updates.push(`${e.uri} (cached read dropped: ${e.invalidated})`);
    },
  });

  const resources = await bridge.listResources();
  const templates = await bridge.listResourceTemplates();
  console.log(`${bridge.serverName} offers ${resources.length} resources and ${templates.length} templates:`);
  for (const r of resources) console.log(`  ${r.uri}  (${r.mimeType ?? 'no type'})`);
  for (const t of templates) console.log(`  ${t.uriTemplate}  (template)`);

  for (const uri of [resources[0]!.uri, resources[resources.length - 1]!.uri, 'demo://resource/dynamic/blob/1']) {
    const read = await bridge.readResource(uri);
    const stored =
      read.artifacts.map((a) => `${a.id} (${a.mimeType}, ${a.sizeBytes} B)`).join(', ') ||
      'nothing: the text stays inline';
    console.log(
      `\nread ${uri}\n  stored: ${stored}\n  the model sees ${JSON.stringify(read.content).length.toLocaleString('en-US')} chars`,
    );
  }

  const again = await bridge.readResource('demo://resource/dynamic/blob/1');
  console.log(`\nread it again: from the cache = ${again.fromCache}`);

  console.log(await bridge.subscribe('demo://resource/dynamic/blob/1'));
  await toggleUpdates(client);
  for (let i = 0; i < 100 && updates.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
  if (!updates[0]) throw new Error('the server sent no resource update in 10 s');
  console.log(`update: ${updates[0]}`);
  const fresh = await bridge.readResource('demo://resource/dynamic/blob/1');
  console.log(`read after the update: from the cache = ${fresh.fromCache}`);

  console.log('\nPlanner tools a model would be offered:');
  for (const tool of bridge.plannerTools('everything')) console.log(`  ${tool.name}: ${tool.description}`);

  await toggleUpdates(client);
  await client.close();
}

/** The server's tool that starts (or stops) its updates; a tool's failure comes back as isError. */
async function toggleUpdates(client: Client) {
  const result = await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
  if (result.isError) throw new Error(`toggle-subscriber-updates: ${JSON.stringify(result.content)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
