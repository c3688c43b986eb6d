/**
 * The model-side read-back tools (artifact_read, artifact_search, artifact_query, artifact_list,
 * artifact_info, artifact_url) as LangChain tools, over the same definitions and handlers the MCP
 * server and the gateway serve (src/mcp/artifact-tools.ts).
 */
import { DynamicStructuredTool } from '@langchain/core/tools';
import type { ArtifactStore } from '../client/artifact-store.js';
import { type ArtifactToolOptions, artifactTools as mcpArtifactTools } from '../mcp/artifact-tools.js';

/**
 * The read-back tools over a store, as LangChain tools: the ones the store offers (the three view
 * tools need a store with views: the HTTP and embedded stores). Each answers with
 * `responseFormat: 'content_and_artifact'`: `content` is the text the service rendered for the model,
 * within `budget`; `artifact` is the structured answer where there is one (artifact_info's ref,
 * artifact_url's link). A refusal (no such artifact, bad arguments) is the content, saying what to
 * do, as the MCP tools answer it; only a failure of the store itself throws.
 *
 * @example
 * const tools = [...withArtifacts(myTools, { store }), ...artifactTools(store, { budget: 20_000 })];
 */
export function artifactTools(store: ArtifactStore, options: ArtifactToolOptions = {}): DynamicStructuredTool[] {
  return mcpArtifactTools(store, options).map(
    (t) =>
      new DynamicStructuredTool({
        name: t.name,
        description: t.description,
        // JSON Schema, passed to the model as it is and checked by LangChain before the call.
        schema: t.inputSchema as unknown as Record<string, unknown>,
        responseFormat: 'content_and_artifact',
        func: async (input: unknown) => {
          const result = await t.call((input ?? {}) as Record<string, unknown>);
          const text = result.content.map((b) => (b.type === 'text' ? b.text : JSON.stringify(b))).join('\n');
          // artifact_info's structured answer is { artifact: ref }: the ref itself is the artifact.
          const structured = result.structuredContent as Record<string, unknown> | undefined;
          return [text, structured && 'artifact' in structured ? structured.artifact : structured];
        },
      }),
  );
}
