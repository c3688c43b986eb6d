/**
 * withArtifacts: a tool set whose results go through the transformer and the guardrail before the AI
 * SDK sees them. The tool's output (what the app's history keeps) holds refs and summaries; its
 * `toModelOutput` gives the model that text, and the images the image policy lets it see as images.
 */
import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';
import type { ArtifactStore } from '../client/artifact-store.js';
import { isArtifactError } from '../core/errors.js';
import type { ArtifactRef, ArtifactScope } from '../core/schemas.js';
import type { CustomTransformer, TransformConfigInput } from '../mcp/config.js';
import { clampObservation, type GuardrailConfigInput } from '../mcp/guardrail.js';
import { isPlainObject } from '../mcp/paths.js';
import { transformToolResult, type TransformStats } from '../mcp/transform/index.js';
import { artifactIdOf, resolvedByMiddleware, storedBase64 } from './refs.js';

export interface WithArtifactsOptions {
  /** Where the bytes go: the HTTP store against the service, the embedded one, or the in-memory one. */
  store: ArtifactStore;
  /** The transformer's config (presets, per-tool fields, the image policy, size limits). */
  config?: TransformConfigInput;
  /** The guardrail's budget for each observation (clampObservation), or false to skip it. */
  guardrail?: GuardrailConfigInput | false;
  /** The scope refs are stored under (a tenant-wide store's user and session, for example). */
  scope?: Partial<ArtifactScope>;
  /** The MCP server the tools come from (`createMCPClient().tools()`): namespaces refs, picks its presets. */
  serverName?: string;
  /** The transformer's custom layer. */
  transform?: CustomTransformer;
  /** Called after each call: what was stored and how much smaller the result got. */
  onTransform?: (info: { tool: string; toolCallId: string; artifacts: ArtifactRef[]; stats: TransformStats }) => void;
}

/**
 * The wrapped tools, by the same names: outputs are now the transformed results (refs, summaries,
 * previews), whatever shape the tool returned, so their type is no longer the tool's own.
 */
export type WithArtifacts<TOOLS extends ToolSet> = { [K in keyof TOOLS]: Tool<unknown, unknown> };

type Block = Record<string, unknown>;
type ModelOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>;
type ContentPart = Extract<ModelOutput, { type: 'content' }>['value'][number];

/**
 * The same tools, each result transformed: binary and oversized payloads stored, the output holding
 * refs and summaries. Tools without `execute` (answered by the client) pass through unchanged.
 * Tools from the AI SDK's MCP client (their results are MCP `CallToolResult`s) go through the same
 * layers as wrapMcpClient's; a native tool may return MCP content blocks (`{ type: 'image', data,
 * mimeType }`, or an array, or `{ content: [...] }`) to have an image shown to the model.
 *
 * @example
 * const result = await generateText({ model, tools: withArtifacts({ screenshot, downloadReport }, { store }) });
 */
export function withArtifacts<TOOLS extends ToolSet>(
  tools: TOOLS,
  options: WithArtifactsOptions,
): WithArtifacts<TOOLS> {
  if (!options?.store) {
    throw new TypeError('withArtifacts(tools, { store }) needs a store: createHttpArtifactStore({ baseUrl, token }).');
  }
  const wrapped: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) wrapped[name] = wrapTool(name, tool, options);
  return wrapped as WithArtifacts<TOOLS>;
}

function wrapTool(name: string, tool: Tool, options: WithArtifactsOptions): Tool {
  const execute = tool.execute;
  if (!execute) return tool;
  const settle = async (raw: unknown, call: ToolExecutionOptions): Promise<unknown> => {
    const { result, artifacts, stats } = await transformToolResult(name, asMcpContent(raw), {
      store: options.store,
      ...(options.config ? { config: options.config } : {}),
      ...(options.scope ? { scope: options.scope } : {}),
      ...(options.serverName ? { serverName: options.serverName } : {}),
      ...(options.transform ? { transform: options.transform } : {}),
    });
    options.onTransform?.({ tool: name, toolCallId: call.toolCallId, artifacts, stats });
    const kept = withImageRefs(result);
    if (options.guardrail === false) return kept;
    const clamp = (store?: ArtifactStore) =>
      clampObservation(kept, {
        ...(store ? { store } : {}),
        tool: name,
        ...(options.guardrail ? { config: options.guardrail } : {}),
        ...(options.scope ? { scope: options.scope } : {}),
      });
    try {
      return (await clamp(options.store)).observation;
    } catch (err) {
      // The store refused the whole observation (quota, size): the model gets it cut to the budget instead.
      if (!isRefusal(err)) throw err;
      return (await clamp()).observation;
    }
  };
  const run = (input: unknown, call: ToolExecutionOptions) => {
    const raw = execute(input, call);
    if (isAsyncIterable(raw)) return settleEach(raw, call, settle);
    return Promise.resolve(raw).then((value) => settle(value, call));
  };
  // The output is the transformed result now: the tool's own outputSchema (which the AI SDK checks saved
  // UI messages against) no longer describes it.
  const { outputSchema: _own, ...rest } = tool as Tool & { outputSchema?: unknown };
  return {
    ...rest,
    execute: run,
    toModelOutput: ({ toolCallId, output }) => modelOutput(output, toolCallId, options.store),
  } as Tool;
}

/** A streaming tool's preliminary outputs and its final one, each transformed (the store keeps bytes once). */
async function* settleEach(
  outputs: AsyncIterable<unknown>,
  call: ToolExecutionOptions,
  settle: (raw: unknown, call: ToolExecutionOptions) => Promise<unknown>,
): AsyncIterable<unknown> {
  for await (const output of outputs) yield await settle(output, call);
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  value != null && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';

const MCP_BLOCK_TYPES = new Set(['text', 'image', 'audio', 'resource', 'resource_link']);
const isMcpBlock = (value: unknown): value is Block =>
  isPlainObject(value) && typeof value.type === 'string' && MCP_BLOCK_TYPES.has(value.type);

/** A native tool's MCP content block, or an array of them, read as the CallToolResult it stands for. */
function asMcpContent(raw: unknown): unknown {
  if (isMcpBlock(raw) && (raw.type === 'image' || raw.type === 'audio')) return { content: [raw] };
  if (Array.isArray(raw) && raw.length > 0 && raw.every(isMcpBlock)) return { content: raw };
  return raw;
}

const isCallToolResult = (value: unknown): value is { content: Block[]; isError?: boolean } =>
  isPlainObject(value) && Array.isArray(value.content) && value.content.every(isPlainObject);

/**
 * An image the policy kept inline is stored too (the transformer puts its resource_link right after
 * it): the output keeps its `artifact://` uri instead of its base64, so the history holds no bytes.
 */
function withImageRefs(result: unknown): unknown {
  if (!isCallToolResult(result)) return result;
  const content = result.content.map((block, i): Block => {
    if (block.type !== 'image' || typeof block.data !== 'string') return block;
    const link = result.content.slice(i + 1, i + 3).find((b) => b.type === 'resource_link');
    const uri = typeof link?.uri === 'string' ? link.uri : undefined;
    const { data: _bytes, ...rest } = block;
    if (uri && artifactIdOf(uri)) return { ...rest, uri };
    // Not stored (the store refused it, or keeps nothing): its bytes stay out of the history, and the
    // text after it says why.
    return { type: 'text', text: 'An image was here; it is not shown, since it could not be stored.' };
  });
  return { ...result, content };
}

const isRefusal = (err: unknown): boolean =>
  isArtifactError(err) && (err.code === 'quota_exceeded' || err.code === 'payload_too_large');

/**
 * What the model reads of a transformed output: its text, and its inline images as images. For a call
 * the model made through artifactMiddleware an image stays an `artifact://` ref (the middleware
 * resolves it for each model call, so saved messages hold no bytes); otherwise its bytes are read
 * from the store here.
 */
async function modelOutput(output: unknown, toolCallId: string, store: ArtifactStore): Promise<ModelOutput> {
  if (typeof output === 'string') return { type: 'text', value: output };
  if (!isCallToolResult(output)) return { type: 'json', value: (output ?? null) as never };
  const parts: ContentPart[] = [];
  let images = 0;
  for (const block of output.content) {
    if (block.type === 'text' && typeof block.text === 'string') {
      parts.push({ type: 'text', text: block.text });
    } else if (block.type === 'image' && typeof block.uri === 'string' && typeof block.mimeType === 'string') {
      const id = artifactIdOf(block.uri)!;
      images++;
      parts.push(
        resolvedByMiddleware(toolCallId)
          ? { type: 'image-url', url: block.uri }
          : { type: 'image-data', data: await storedBase64(store, id), mediaType: block.mimeType },
      );
    } else if (block.type === 'resource_link' && typeof block.uri === 'string') {
      // The summary before it names the artifact; the link says where a read-back tool finds it.
      parts.push({ type: 'text', text: `(${block.uri})` });
    } else {
      parts.push({ type: 'text', text: JSON.stringify(block) });
    }
  }
  if (output.isError === true && images === 0) {
    return { type: 'error-text', value: parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n') };
  }
  return { type: 'content', value: parts };
}
