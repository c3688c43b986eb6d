/**
 * withArtifacts: LangChain tools whose results go through the transformer and the guardrail, with
 * `responseFormat: 'content_and_artifact'`: the ToolMessage's `content` is what the model should
 * read, its `artifact` the ArtifactRef(s) of what was stored.
 */
import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import { isDirectToolOutput, ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import type { ArtifactStore } from '../client/artifact-store.js';
import { formatBytes } from '../core/bytes.js';
import { isArtifactError } from '../core/errors.js';
import { namespaceFromToolName } from '../core/ids.js';
import type { ArtifactRef, ArtifactScope, PutOptions } from '../core/schemas.js';
import { detectBinary } from '../mcp/detect.js';
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
import { exactBase64 } from './markers.js';
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
 * (several), or nothing. A tool that already answered with content_and_artifact (or returned a
 * ToolMessage) keeps its own artifact, with the bytes and base64 in it stored and replaced by their
 * refs, beside the refs when there are any.
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
      // A Command or a ToolMessage goes to ToolNode as it is (LangChain's own tools do the same).
      if (isDirectToolOutput(raw)) return [await directOutput(inner.name, raw, options), undefined];
      const [content, theirs] = ownArtifact && Array.isArray(raw) && raw.length === 2 ? raw : [raw, undefined];
      if (isDirectToolOutput(content)) return [await directOutput(inner.name, content, options), undefined];
      const { content: forModel, refs } = await toModel(inner.name, content, options);
      const artifact = ownArtifact ? await artifactOf(inner.name, refs, theirs, options) : listOf(refs);
      return [forModel, artifact];
    },
  });
}

/** The refs alone: one, several, or none. */
const listOf = (refs: ArtifactRef[]): ToolArtifact =>
  refs.length === 0 ? undefined : refs.length === 1 ? refs[0] : refs;

/**
 * A tool's own artifact, its payloads (bytes, base64) stored and replaced by their refs, beside the
 * refs of what its content stored.
 */
async function artifactOf(
  toolName: string,
  refs: ArtifactRef[],
  theirs: unknown,
  options: WithArtifactsOptions,
): Promise<ToolArtifact> {
  if (theirs === undefined) return listOf(refs);
  const settled = await settleArtifact(toolName, theirs, options);
  const all = [...refs, ...settled.refs.filter((r) => !refs.some((x) => x.id === r.id))];
  return all.length > 0 ? { refs: all, artifact: settled.value } : (settled.value as ToolArtifact);
}

/**
 * A direct tool output as ToolNode should get it: a ToolMessage with its content through the
 * transformer and the guardrail and its artifact's payloads stored, its other fields kept; anything
 * else (a LangGraph Command) unchanged.
 */
async function directOutput(toolName: string, out: unknown, options: WithArtifactsOptions): Promise<unknown> {
  if (!ToolMessage.isInstance(out)) return out;
  const { content, refs } = await toModel(toolName, out.content, options);
  const artifact = await artifactOf(toolName, refs, out.artifact, options);
  const kept = Object.fromEntries(
    Object.entries((out as { lc_kwargs?: Record<string, unknown> }).lc_kwargs ?? {}).filter(
      ([k]) => k !== 'content' && k !== 'contentBlocks' && k !== 'artifact',
    ),
  );
  const fields: Record<string, unknown> = {
    ...kept,
    tool_call_id: out.tool_call_id,
    name: out.name,
    id: out.id,
    status: out.status,
    additional_kwargs: out.additional_kwargs,
    response_metadata: out.response_metadata,
    metadata: out.metadata,
  };
  for (const k of Object.keys(fields)) if (fields[k] === undefined) delete fields[k];
  return new ToolMessage({ ...(fields as { tool_call_id: string }), content, artifact });
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

const MIME_FIELDS = ['mimeType', 'mime_type', 'media_type', 'mediaType'];

/**
 * A tool's own artifact with its payloads stored: each byte array (Uint8Array, Buffer, ArrayBuffer,
 * DataView, a Buffer's JSON) and each string holding a run of base64 characters as long as the
 * config's `minBase64Chars` (256) is put in the store and replaced by its ArtifactRef (a string that
 * is exactly base64 or a base64 data: URL as the bytes it encodes, any other as text). Plain objects
 * and arrays are copied where they change; other objects (class instances) are kept as they are.
 * A payload the store refuses (too large, over quota) becomes a line that says so.
 */
async function settleArtifact(
  toolName: string,
  value: unknown,
  options: WithArtifactsOptions,
): Promise<{ value: unknown; refs: ArtifactRef[] }> {
  const config = resolveTransformConfig(options.config ?? {});
  const run = new RegExp(`[A-Za-z0-9+/_-]{${config.minBase64Chars},}`);
  const put: PutOptions = {
    namespace: namespaceFromToolName(toolName, options.serverName),
    source: { tool: toolName, field: 'artifact', ...(options.serverName ? { server: options.serverName } : {}) },
    ...(options.scope ? { scope: options.scope } : {}),
    ...(config.ttlSeconds !== undefined ? { ttl: config.ttlSeconds } : {}),
  };
  const refs = new Map<string, ArtifactRef>();
  const memo = new Map<unknown, Promise<unknown>>();

  const store = (key: unknown, bytes: Uint8Array, mimeType: string | undefined): Promise<unknown> => {
    const known = memo.get(key);
    if (known) return known;
    const pending = (async () => {
      const type = mimeType ?? (await detectBinary(bytes.subarray(0, 4100)))?.mime ?? 'application/octet-stream';
      try {
        const ref = await options.store.putBytes(bytes, { ...put, mimeType: type });
        refs.set(ref.id, ref);
        return ref;
      } catch (err) {
        if (isArtifactError(err) && (err.code === 'payload_too_large' || err.code === 'quota_exceeded'))
          return `[${type}, ${formatBytes(bytes.byteLength)} — not stored: ${err.message}]`;
        throw err;
      }
    })();
    memo.set(key, pending);
    return pending;
  };

  const settle = async (v: unknown, parent: Record<string, unknown> | undefined): Promise<unknown> => {
    if (typeof v === 'string') {
      if (!run.test(v)) return v;
      const exact = exactBase64(v);
      if (exact) {
        const declared = parent
          ? MIME_FIELDS.map((f) => parent[f]).find(
              (m): m is string => typeof m === 'string' && /^[\w.+-]+\/[\w.+-]+$/.test(m),
            )
          : undefined;
        return store(v, exact.bytes, exact.mimeType ?? declared);
      }
      return store(v, new TextEncoder().encode(v), 'text/plain; charset=utf-8');
    }
    if (v === null || typeof v !== 'object') return v;
    if (v instanceof Uint8Array || v instanceof Uint8ClampedArray)
      return store(v, new Uint8Array(v.buffer, v.byteOffset, v.byteLength), undefined);
    if (v instanceof ArrayBuffer) return store(v, new Uint8Array(v), undefined);
    if (v instanceof DataView) return store(v, new Uint8Array(v.buffer, v.byteOffset, v.byteLength), undefined);
    if (Array.isArray(v)) {
      const out = await Promise.all(v.map((item) => settle(item, undefined)));
      return out.every((item, i) => item === v[i]) ? v : out;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return v;
    const obj = v as Record<string, unknown>;
    const data = obj.data;
    if (
      obj.type === 'Buffer' &&
      Object.keys(obj).length === 2 &&
      Array.isArray(data) &&
      data.length > 0 &&
      data.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)
    )
      return store(v, Uint8Array.from(data as number[]), undefined);
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(obj)) {
      out[k] = await settle(item, obj);
      if (out[k] !== item) changed = true;
    }
    return changed ? out : v;
  };

  const settled = await settle(value, undefined);
  return { value: settled, refs: [...refs.values()] };
}
