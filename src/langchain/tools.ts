/**
 * withArtifacts: LangChain tools whose results go through the transformer and the guardrail, with
 * `responseFormat: 'content_and_artifact'`: the ToolMessage's `content` is what the model should
 * read, its `artifact` the ArtifactRef(s) of what was stored.
 */
import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import type { ArtifactStore } from '../client/artifact-store.js';
import type { ArtifactRef, ArtifactScope } from '../core/schemas.js';
import {
  type CustomTransformer,
  resolveTransformConfig,
  type TransformConfigInput,
  type TransformEvent,
  type TransformOptions,
} from '../mcp/config.js';
import {
  clampObservation,
  GuardrailConfigSchema,
  type GuardrailConfigInput,
  type ObservationClampedEvent,
} from '../mcp/guardrail.js';
import { parseConfig } from '../mcp/config.js';
import { transformToolResult } from '../mcp/transform/index.js';
import { fromMcpContent, isBlockArray, type LcBlock, type McpBlock, toMcpContent } from './content.js';

export interface WithArtifactsOptions {
  /** Where the bytes go: the HTTP store against the service, the embedded one, or in memory in tests. */
  store: ArtifactStore;
  /** The transformer's config (presets, per-tool fields, image policy, sizes); see docs/mcp.md. */
  config?: TransformConfigInput;
  /** The guardrail's config (the observation's budget), or false for none; see docs/mcp.md. */
  guardrail?: GuardrailConfigInput | false;
  /** The scope the artifacts are put under (a tenant-wide store's session, say). */
  scope?: Partial<ArtifactScope>;
  /** Prefixes the namespace of what each tool stores (`tableau.download_workbook`), and picks server-bound specs. */
  serverName?: string;
  /** The custom transform layer: the escape hatch (docs/mcp.md). */
  transform?: CustomTransformer;
  /** Counts tokens, for the guardrail's `maxObservationTokens`. */
  countTokens?: (text: string) => number;
  /** `artifact.stored` for each artifact stored, `observation.clamped` for each observation cut down. */
  onEvent?: (event: TransformEvent | ObservationClampedEvent) => void;
}

/**
 * What a wrapped tool's ToolMessage carries as `artifact`: the ref of what it stored (one), the refs
 * (several), or nothing. A tool that already answered with content_and_artifact keeps its own artifact,
 * beside the refs when there are any.
 */
export type ToolArtifact = ArtifactRef | ArtifactRef[] | { refs: ArtifactRef[]; artifact: unknown } | undefined;

/** A tool as LangChain hands it over: a StructuredTool, a `tool()`, a DynamicTool, or a `runnable.asTool()`. */
type AnyTool = StructuredToolInterface & { responseFormat?: string; returnDirect?: boolean };

/**
 * Wraps one tool, or an array of them, so each result goes through `transformToolResult` and then
 * `clampObservation`: binary and oversized payloads are stored, and the model reads a short result.
 * Each wrapped tool keeps the original's name, description and schema, and answers with
 * `responseFormat: 'content_and_artifact'`: `content` is the short result, with the images the image
 * policy shows as LangChain image blocks; `artifact` is the ArtifactRef stored (an array when several).
 *
 * @example
 * const tools = withArtifacts([downloadReport, takeScreenshot], { store });
 * const toolNode = new ToolNode(tools);
 */
export function withArtifacts<T extends AnyTool>(tool: T, options: WithArtifactsOptions): DynamicStructuredTool;
export function withArtifacts<T extends AnyTool>(
  tools: readonly T[],
  options: WithArtifactsOptions,
): DynamicStructuredTool[];
export function withArtifacts(
  tools: AnyTool | readonly AnyTool[],
  options: WithArtifactsOptions,
): DynamicStructuredTool | DynamicStructuredTool[] {
  if (!options || typeof options.store?.putBytes !== 'function')
    throw new TypeError(
      'withArtifacts needs { store }: an ArtifactStore (createHttpArtifactStore, openArtifactStore, …).',
    );
  // Bad configs fail here, at setup, naming the key, rather than at the first tool call.
  resolveTransformConfig(options.config ?? {});
  if (options.guardrail !== false) parseConfig(GuardrailConfigSchema, options.guardrail ?? {}, 'guardrail');
  return Array.isArray(tools) ? tools.map((t) => wrapOne(t, options)) : wrapOne(tools as AnyTool, options);
}

function wrapOne(inner: AnyTool, options: WithArtifactsOptions): DynamicStructuredTool {
  if (!inner || typeof inner.name !== 'string' || typeof inner.invoke !== 'function')
    throw new TypeError('withArtifacts takes LangChain tools (StructuredTool, tool(), DynamicTool or asTool()).');
  const ownArtifact = inner.responseFormat === 'content_and_artifact';
  const fields = inner as unknown as Record<string, unknown>;
  return new DynamicStructuredTool({
    name: inner.name,
    description: inner.description,
    schema: inner.schema,
    responseFormat: 'content_and_artifact',
    ...(inner.returnDirect !== undefined ? { returnDirect: inner.returnDirect } : {}),
    ...(fields.verboseParsingErrors !== undefined
      ? { verboseParsingErrors: Boolean(fields.verboseParsingErrors) }
      : {}),
    ...(fields.metadata !== undefined ? { metadata: fields.metadata as Record<string, unknown> } : {}),
    ...(fields.tags !== undefined ? { tags: fields.tags as string[] } : {}),
    ...(fields.extras !== undefined ? { extras: fields.extras as Record<string, unknown> } : {}),
    func: async (input: unknown, runManager?: CallbackManagerForToolRun, config?: RunnableConfig) => {
      const raw = await callInner(inner, input, runManager, config);
      const [content, theirs] = ownArtifact && Array.isArray(raw) && raw.length === 2 ? raw : [raw, undefined];
      const { content: forModel, refs } = await toModel(inner.name, content, options);
      let artifact: ToolArtifact;
      if (ownArtifact && theirs !== undefined)
        artifact = refs.length > 0 ? { refs, artifact: theirs } : (theirs as ToolArtifact);
      else artifact = refs.length === 0 ? undefined : refs.length === 1 ? refs[0] : refs;
      return [forModel, artifact];
    },
  });
}

/** Runs the original tool's own body with the input already parsed, in this tool's run. */
async function callInner(
  inner: AnyTool,
  input: unknown,
  runManager: CallbackManagerForToolRun | undefined,
  config: RunnableConfig | undefined,
): Promise<unknown> {
  const body = (inner as unknown as { _call?: (i: unknown, r?: unknown, c?: unknown) => unknown })._call;
  if (typeof body !== 'function') {
    // A runnable's asTool(): invoked as a runnable, without the tool call, so it answers with its output.
    const { toolCall: _, ...rest } = (config ?? {}) as RunnableConfig & { toolCall?: unknown };
    return inner.invoke(input as never, rest as never);
  }
  const out = await body.call(inner, input, runManager, config);
  if (!isAsyncGenerator(out)) return out;
  // A tool that streams events: pass them on, and take what it returns.
  for (;;) {
    const step = await out.next();
    if (step.done) return step.value;
    await runManager?.handleToolEvent(step.value);
  }
}

const isAsyncGenerator = (v: unknown): v is AsyncGenerator<unknown, unknown> =>
  v !== null &&
  typeof v === 'object' &&
  typeof (v as AsyncGenerator)[Symbol.asyncIterator] === 'function' &&
  typeof (v as AsyncGenerator).next === 'function';

/**
 * A tool's raw result as the model should read it: through the transformer, then the guardrail
 * (over everything but the images shown inline), with the refs of everything stored.
 */
export async function toModel(
  toolName: string,
  raw: unknown,
  options: WithArtifactsOptions,
): Promise<{ content: string | LcBlock[]; refs: ArtifactRef[] }> {
  const transformOptions: TransformOptions = {
    store: options.store,
    ...(options.config ? { config: options.config } : {}),
    ...(options.transform ? { transform: options.transform } : {}),
    ...(options.scope ? { scope: options.scope } : {}),
    ...(options.serverName ? { serverName: options.serverName } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  };
  const input =
    typeof raw === 'string'
      ? { content: [{ type: 'text', text: raw }] }
      : isBlockArray(raw)
        ? { content: toMcpContent(raw) }
        : raw;
  const { result, artifacts } = await transformToolResult(toolName, input, transformOptions);
  const refs = [...artifacts];

  // What the guardrail sees: the text (or the JSON of a native result), never an inline image.
  let observation: unknown;
  let blocks: LcBlock[] | undefined;
  if (isMcpResult(result)) {
    const back = fromMcpContent(result.content);
    observation = back.text.join('\n');
    if (back.content.some((b) => b.type !== 'text')) blocks = back.content;
  } else observation = result;

  let text: string;
  let clamped = false;
  if (options.guardrail === false) text = typeof observation === 'string' ? observation : JSON.stringify(observation);
  else {
    const clamp = await clampObservation(observation, {
      store: options.store,
      config: options.guardrail ?? {},
      tool: toolName,
      ...(options.scope ? { scope: options.scope } : {}),
      ...(options.countTokens ? { countTokens: options.countTokens } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    if (clamp.artifact) refs.push(clamp.artifact);
    clamped = clamp.clamped;
    text = typeof clamp.observation === 'string' ? clamp.observation : JSON.stringify(clamp.observation);
  }
  if (!blocks) return { content: text, refs };
  // Images stay where the transformer put them; text cut down by the guardrail goes first, as one block.
  const content = clamped ? [{ type: 'text', text } as LcBlock, ...blocks.filter((b) => b.type !== 'text')] : blocks;
  return { content, refs };
}

function isMcpResult(v: unknown): v is { content: McpBlock[] } {
  return (
    v !== null &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    Array.isArray((v as { content?: unknown }).content) &&
    (v as { content: unknown[] }).content.every(
      (b) => b !== null && typeof b === 'object' && typeof (b as McpBlock).type === 'string',
    ) &&
    Object.keys(v).every((k) => k === 'content' || k === 'isError' || k === '_meta' || k === 'structuredContent')
  );
}
