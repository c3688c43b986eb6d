/**
 * The read-back tools (artifact_read, artifact_search, artifact_query, artifact_list, artifact_info,
 * artifact_url) as an AI SDK tool set: the model reads what the wrapped tools stored, within its budget.
 */
import type { Tool, ToolSet } from 'ai';
import { z } from 'zod';
import type { ArtifactStore } from '../client/artifact-store.js';
import { type ArtifactToolOptions, artifactTools as mcpArtifactTools } from '../mcp/artifact-tools.js';

/**
 * The tools for the model to read stored artifacts back, by name. A store without views (not the
 * service) offers only artifact_list, artifact_info and artifact_url. A call the store refuses, or
 * with bad arguments, is a tool error whose text says what to do, which the model reads.
 *
 * @example
 * const tools = { ...withArtifacts(myTools, { store, config: { viewTools: true } }), ...artifactTools(store) };
 */
export function artifactTools(store: ArtifactStore, options: ArtifactToolOptions = {}): ToolSet {
  const set: ToolSet = {};
  for (const t of mcpArtifactTools(store, options)) {
    set[t.name] = {
      description: t.description,
      inputSchema: z.fromJSONSchema(t.inputSchema as Parameters<typeof z.fromJSONSchema>[0]),
      execute: async (input: unknown) => {
        const result = await t.call(input as Record<string, unknown>);
        const text = result.content
          .map((block) => (block.type === 'text' ? block.text : JSON.stringify(block)))
          .join('\n');
        if (result.isError) throw new Error(text);
        return text;
      },
    } as Tool;
  }
  return set;
}
