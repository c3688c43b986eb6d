import type { ArtifactStore } from '../client/artifact-store.js';
import { createNoOpArtifactStore, isUnstoredRef } from '../client/noop-store.js';
import { isArtifactError } from '../core/errors.js';
import { assertNamespace, namespaceFromToolName } from '../core/ids.js';
import type { ArtifactRef, PutOptions } from '../core/schemas.js';
import {
  resolveTransformConfig,
  type BlockSpec,
  type CustomTransformContext,
  type FieldSpec,
  type Layer,
  type ToolSpec,
  type TransformConfig,
  type TransformOptions,
} from './config.js';
import { base64Candidate, cleanBase64, CorruptBase64Error, decodeClean, decodeHead, detectBinary, type CleanBase64, type DetectedType } from './detect.js';
import { BinaryValue, depthMarker, jsonSize, toJsonSafe, type JsonValue, type WorkValue } from './json.js';
import { isPlainObject, parseFieldPath, resolveFieldPath } from './paths.js';
import { presetSpecs } from './presets.js';
import { describeType, formatCount, humanSize, modelRef, renderTemplate, siblingVars } from './summary.js';
import { truncateToFit, measureChars } from './truncate.js';

export interface TransformStats {
  /** Characters of the result as JSON, before and after (strings over 64 Ki chars counted by length). */
  charsBefore: number;
  charsAfter: number;
  /** Distinct artifacts stored (or, with a NoOp store, described but not stored). */
  artifacts: number;
  bytesStored: number;
  /** Payloads found but not stored: too large, refused by the store, or corrupt. */
  notStored: number;
  byLayer: Record<Layer, number>;
  /** Things a host may want to log: cycles, depth limits, corrupt payloads, refusals. */
  warnings: string[];
}

export interface TransformResult<T = unknown> {
  /** What the model should see: a CallToolResult for MCP input, transformed JSON for native input. */
  result: T;
  /** Every ArtifactRef stored, once each. */
  artifacts: ArtifactRef[];
  stats: TransformStats;
}

/** A block of a CallToolResult, loosely typed: results come from servers we do not control. */
type Block = Record<string, WorkValue>;

const ARTIFACT_URI = 'artifact://';
export const artifactUri = (id: string): string => `${ARTIFACT_URI}${id}`;

/** What stands in for a stored (or refused) payload inside JSON. */
type Outcome =
  | { ok: true; ref: ArtifactRef; summary: string; stored: boolean }
  | { ok: false; error: 'too_large' | 'corrupt_base64' | 'not_stored'; summary: string; details: Record<string, JsonValue> };

interface PayloadContext {
  layer: Layer;
  /** Where it was found, for summaries (`content`, `files[2].data`, `image block`). */
  where?: string;
  spec?: FieldSpec | BlockSpec;
  /** Template variables: sibling fields, resource name and uri. */
  vars: Record<string, string | number | boolean>;
  /** Media type the source declared (block mimeType, data: URL). */
  declaredMime?: string;
  /** A name to store it under when no template gives one. */
  name?: string;
}

let defaultNoOp: ArtifactStore | undefined;
const noOpStore = () => (defaultNoOp ??= createNoOpArtifactStore());

/**
 * Turns a raw tool result into what the model should see: binary payloads stored as artifacts and
 * replaced by refs + one-line summaries, big text and JSON stored with a preview, small data inline.
 * Layers run in the design's order: L5 custom → L4 per-tool fields → L1 resource_link → L2 typed
 * blocks → L3 heuristic → L0 size net. Never throws on odd input (cycles, depth, corrupt base64);
 * store failures other than "too large" and quota refusals reject, so no payload is dropped silently.
 *
 * @example
 * const { result, artifacts, stats } = await transformToolResult('download_workbook', raw, { store, serverName: 'tableau' });
 */
export async function transformToolResult<T = unknown>(toolName: string, result: unknown, options: TransformOptions = {}): Promise<TransformResult<T>> {
  const run = new TransformRun(toolName, options);
  return run.execute(result) as Promise<TransformResult<T>>;
}

class TransformRun {
  readonly config: TransformConfig;
  readonly namespace: string;
  readonly store: ArtifactStore;
  readonly specs: ToolSpec[];
  private readonly artifacts = new Map<string, ArtifactRef>();
  private readonly memo = new Map<string | Uint8Array, Promise<Outcome>>();
  /** Replacements made so far: a JSON text block is re-serialized only when its document changed. */
  private edits = 0;
  readonly stats: TransformStats = {
    charsBefore: 0,
    charsAfter: 0,
    artifacts: 0,
    bytesStored: 0,
    notStored: 0,
    byLayer: { custom: 0, fields: 0, links: 0, blocks: 0, heuristic: 0, size: 0 },
    warnings: [],
  };

  constructor(
    readonly toolName: string,
    readonly options: TransformOptions,
  ) {
    this.config = resolveTransformConfig(options.config);
    this.namespace = options.namespace !== undefined ? assertNamespace(options.namespace) : namespaceFromToolName(toolName, options.serverName);
    this.store = options.store ?? noOpStore();
    this.specs = toolSpecsFor(toolName, options.serverName, this.config);
  }

  async execute(input: unknown): Promise<TransformResult> {
    const { value, report } = toJsonSafe(input, this.config.maxDepth);
    if (report.circular > 0) this.warn(`${report.circular} circular reference(s) replaced by a marker`);
    if (report.depthLimited > 0) this.warn(`${report.depthLimited} subtree(s) nested deeper than ${this.config.maxDepth} levels replaced by a marker`);
    this.stats.charsBefore = jsonSize(value);

    let output: WorkValue;
    const custom = this.options.transform ? await this.options.transform(this.toolName, input, this.customContext()) : undefined;
    if (custom !== undefined) {
      // The escape hatch has the last word: only raw bytes it left in the value are stored, nothing else changes.
      output = await this.processDocument(toJsonSafe(custom, this.config.maxDepth).value, { fieldsLayer: false, heuristics: false, sizeNet: false });
    } else if (isCallToolResult(value)) {
      output = await this.processCallToolResult(value);
    } else if (isPlainObject(value) && 'toolResult' in value && Object.keys(value).every((k) => k === 'toolResult' || k === '_meta')) {
      // The SDK's legacy compatibility shape.
      value.toolResult = await this.processDocument(value.toolResult!);
      output = value;
    } else {
      output = await this.processDocument(value);
    }

    this.stats.charsAfter = jsonSize(output);
    this.stats.artifacts = this.artifacts.size;
    return { result: output, artifacts: [...this.artifacts.values()], stats: this.stats };
  }

  private customContext(): CustomTransformContext {
    const record = async (ref: Promise<ArtifactRef>): Promise<ArtifactRef> => this.record(await ref, 'custom');
    const store = this.store;
    const tracked: ArtifactStore = {
      ...store,
      capabilities: store.capabilities,
      putBytes: (data, o) => record(store.putBytes(data, this.putOptions(o))),
      putText: (text, o) => record(store.putText(text, this.putOptions(o))),
      putBase64: (data, o) => record(store.putBase64(data, this.putOptions(o))),
      putStream: (stream, o) => record(store.putStream(stream, this.putOptions(o))),
    };
    return { toolName: this.toolName, namespace: this.namespace, store: tracked, ...(this.options.scope ? { scope: this.options.scope } : {}) };
  }

  private putOptions(o: PutOptions = {}): PutOptions {
    const out: PutOptions = { namespace: this.namespace, source: { tool: this.toolName, ...(this.options.serverName ? { server: this.options.serverName } : {}) }, ...o };
    if (this.options.scope && !o.scope) out.scope = this.options.scope;
    if (this.config.ttlSeconds !== undefined && o.ttl === undefined) out.ttl = this.config.ttlSeconds;
    return out;
  }

  private record(ref: ArtifactRef, layer: Layer): ArtifactRef {
    if (!this.artifacts.has(ref.id)) {
      this.artifacts.set(ref.id, ref);
      this.stats.byLayer[layer]++;
      if (!isUnstoredRef(ref)) this.stats.bytesStored += ref.sizeBytes;
      this.options.onEvent?.({ type: 'artifact.stored', ref, tool: this.toolName, layer });
    } else {
      // The same bytes reached two layers as different strings (a text block and an image block of one
      // SVG): one artifact, and the store now describes it as the later put did. `artifacts` follows it.
      this.artifacts.set(ref.id, ref);
    }
    return ref;
  }

  private replace(parent: Record<string, WorkValue> | WorkValue[], key: string | number, value: WorkValue): void {
    (parent as Record<string | number, WorkValue>)[key] = value;
    this.edits++;
  }

  warn(message: string): void {
    if (!this.stats.warnings.includes(message)) this.stats.warnings.push(message);
  }

  // ---------------------------------------------------------------- MCP CallToolResult

  private async processCallToolResult(result: Record<string, WorkValue>): Promise<Record<string, WorkValue>> {
    const blocks = result.content as WorkValue[];
    const out: WorkValue[] = [];
    for (const block of blocks) {
      if (!isPlainObject(block)) {
        out.push(block);
        continue;
      }
      for (const replaced of await this.processBlock(block)) out.push(replaced);
    }
    result.content = out;
    if (isPlainObject(result.structuredContent)) {
      const structured = await this.processDocument(result.structuredContent);
      // structuredContent must stay an object.
      result.structuredContent = isPlainObject(structured) ? structured : { value: structured };
    }
    return result;
  }

  private async processBlock(block: Block): Promise<Block[]> {
    switch (block.type) {
      case 'text':
        return typeof block.text === 'string' ? this.processTextBlock(block, block.text) : [block];
      case 'image':
      case 'audio':
        return this.processMediaBlock(block);
      case 'resource':
        return this.processEmbeddedResource(block);
      case 'resource_link':
        return this.processResourceLink(block);
      default:
        return [block];
    }
  }

  /** A text block: JSON text is walked like structuredContent; bare base64 is probed; long text is stored. */
  private async processTextBlock(block: Block, text: string): Promise<Block[]> {
    const trimmed = text.trim();
    const first = trimmed[0];
    if ((first === '{' || first === '[') && (trimmed.endsWith('}') || trimmed.endsWith(']'))) {
      let doc: WorkValue | undefined;
      try {
        doc = JSON.parse(trimmed) as WorkValue;
      } catch {
        doc = undefined;
      }
      if (doc !== undefined) {
        const before = this.edits;
        const processed = await this.processDocument(doc, { parsedText: true });
        if (this.edits === before) return [block];
        const indent = /^[{[]\s*\n(\s+)/.exec(trimmed)?.[1]?.length ?? 0;
        return [{ ...block, text: JSON.stringify(processed, null, indent > 0 && indent <= 8 ? indent : undefined) }];
      }
    }
    if (this.config.heuristics) {
      const candidate = base64Candidate(trimmed, this.config.minBase64Chars);
      if (candidate) {
        const outcome = await this.probeCandidate(trimmed, candidate, { layer: 'heuristic', vars: {} });
        if (outcome) return this.blocksFor(outcome, block);
      }
    }
    if (text.length > this.config.maxInlineChars) {
      const outcome = await this.storeText(text, 'text/plain; charset=utf-8', { layer: 'size', vars: {} });
      return this.blocksFor(outcome, block, `\n\nPreview:\n${previewText(text, this.config.previewChars)}`);
    }
    return [block];
  }

  /** L2: image and audio blocks always become artifacts. */
  private async processMediaBlock(block: Block): Promise<Block[]> {
    const kind = block.type as 'image' | 'audio';
    if (typeof block.data !== 'string') {
      this.warn(`${kind} block without base64 data`);
      return [textBlock(`The ${kind} block from ${this.toolName} had no base64 data and was dropped.`)];
    }
    const declaredMime = typeof block.mimeType === 'string' ? block.mimeType : undefined;
    const outcome = await this.storeBase64(block.data, {
      layer: 'blocks',
      where: `${kind} block`,
      spec: this.blockSpec(),
      vars: {},
      ...(declaredMime ? { declaredMime } : {}),
    });
    return this.blocksFor(outcome, block);
  }

  /** L2: embedded resources: a blob is stored; text stays inline under inlineTextIfUnderChars. */
  private async processEmbeddedResource(block: Block): Promise<Block[]> {
    const resource = block.resource;
    if (!isPlainObject(resource)) return [block];
    const uri = typeof resource.uri === 'string' ? resource.uri : undefined;
    const declaredMime = typeof resource.mimeType === 'string' ? resource.mimeType : undefined;
    const name = uri ? nameFromUri(uri) : undefined;
    const vars = { ...(uri ? { uri } : {}), ...(name ? { name } : {}) };
    if (typeof resource.blob === 'string') {
      const outcome = await this.storeBase64(resource.blob, {
        layer: 'blocks',
        where: uri ? `resource ${uri}` : 'embedded resource',
        spec: this.blockSpec(),
        vars,
        ...(declaredMime ? { declaredMime } : {}),
        ...(name ? { name } : {}),
      });
      return this.blocksFor(outcome, block);
    }
    if (typeof resource.text === 'string' && resource.text.length >= this.config.inlineTextIfUnderChars) {
      const outcome = await this.storeText(resource.text, declaredMime ?? 'text/plain; charset=utf-8', {
        layer: 'blocks',
        where: uri ? `resource ${uri}` : 'embedded resource',
        spec: this.blockSpec(),
        vars,
        ...(name ? { name } : {}),
      });
      return this.blocksFor(outcome, block, `\n\nPreview:\n${previewText(resource.text, this.config.previewChars)}`);
    }
    return [block];
  }

  /** L1: a resource_link stays a lazy link with a hint, unless the auto-read policy allows a read. */
  private async processResourceLink(block: Block): Promise<Block[]> {
    const uri = typeof block.uri === 'string' ? block.uri : undefined;
    if (!uri || uri.startsWith(ARTIFACT_URI)) return [block];
    const size = typeof block.size === 'number' ? block.size : undefined;
    const name = typeof block.name === 'string' ? block.name : nameFromUri(uri);
    const mime = typeof block.mimeType === 'string' ? block.mimeType : undefined;
    const policy = this.config.autoReadIfSizeUnderBytes;
    if (policy > 0 && size !== undefined && size < policy && this.options.readResource) {
      try {
        const read = await this.options.readResource(uri);
        return await this.blocksForReadResource(uri, name, read.contents as unknown as WorkValue[]);
      } catch (err) {
        this.warn(`auto-read of ${uri} failed: ${(err as Error)?.message ?? String(err)}`);
        return [block, textBlock(`${linkLine(name, mime, size, uri)} Reading it failed (${(err as Error)?.message ?? String(err)}); the link is kept. ${readHint(uri)}`)];
      }
    }
    return [block, textBlock(`${linkLine(name, mime, size, uri)} It was not read. ${readHint(uri)}`)];
  }

  private async blocksForReadResource(uri: string, name: string | undefined, contents: WorkValue[]): Promise<Block[]> {
    const out: Block[] = [];
    for (const content of contents) {
      if (!isPlainObject(content)) continue;
      const contentUri = typeof content.uri === 'string' ? content.uri : uri;
      const mime = typeof content.mimeType === 'string' ? content.mimeType : undefined;
      const ctx: PayloadContext = { layer: 'links', where: `resource ${contentUri}`, vars: { uri: contentUri, ...(name ? { name } : {}) }, ...(name ? { name } : {}), ...(mime ? { declaredMime: mime } : {}) };
      if (typeof content.blob === 'string') {
        out.push(...this.blocksFor(await this.storeBase64(content.blob, ctx), {}));
      } else if (typeof content.text === 'string') {
        if (content.text.length < this.config.inlineTextIfUnderChars) out.push({ type: 'resource', resource: content });
        else out.push(...this.blocksFor(await this.storeText(content.text, mime ?? 'text/plain; charset=utf-8', ctx), {}, `\n\nPreview:\n${previewText(content.text, this.config.previewChars)}`));
      }
    }
    return out.length > 0 ? out : [textBlock(`Resource ${uri} was read but held no contents.`)];
  }

  /** The blocks that replace a payload block: summary text (+ preview) and a link to the artifact. */
  private blocksFor(outcome: Outcome, original: Block, extraText = ''): Block[] {
    const annotations: Block = isPlainObject(original.annotations) ? { annotations: original.annotations } : {};
    if (!outcome.ok) return [{ type: 'text', text: outcome.summary + extraText, ...annotations }];
    const text: Block = { type: 'text', text: outcome.summary + extraText, ...annotations };
    if (!outcome.stored) return [text];
    const ref = outcome.ref;
    const link: Block = { type: 'resource_link', uri: artifactUri(ref.id), name: ref.filename ?? ref.id, mimeType: ref.mimeType, size: ref.sizeBytes, ...annotations };
    return [text, link];
  }

  private blockSpec(): BlockSpec | undefined {
    for (const spec of this.specs) if (spec.blocks) return spec.blocks;
    return undefined;
  }

  // ---------------------------------------------------------------- JSON documents

  /**
   * L4 fields, L3 heuristic and L0 size net over one JSON document we own (mutated in place; the
   * root may be replaced, so use the return value).
   */
  async processDocument(root: WorkValue, opts: { fieldsLayer?: boolean; heuristics?: boolean; sizeNet?: boolean; parsedText?: boolean } = {}): Promise<WorkValue> {
    const holder: Record<string, WorkValue> = { root };
    if (opts.fieldsLayer !== false) await this.applyFieldSpecs(holder);
    await this.applyHeuristics(holder, 'root', opts.heuristics !== false && this.config.heuristics, opts.parsedText === true);
    if (opts.sizeNet !== false) await this.applySizeNet(holder, 'root', '');
    return holder.root!;
  }

  private async applyFieldSpecs(holder: Record<string, WorkValue>): Promise<void> {
    for (const spec of this.specs) {
      for (const field of spec.fields ?? []) {
        for (const site of resolveFieldPath(holder.root!, parseFieldPath(field.path))) {
          if (field.when && !Object.entries(field.when).every(([k, v]) => isPlainObject(site.parent) && site.parent[k] === v)) continue;
          const vars = siblingVars(site.parent);
          const ctx: PayloadContext = { layer: 'fields', where: shortPath(site.path), spec: field, vars, ...nameFromSiblings(vars) };
          let outcome: Outcome | undefined;
          if (site.value instanceof BinaryValue) outcome = await this.storeBytes(site.value.bytes, ctx);
          else if (typeof site.value === 'string') {
            const candidate = base64Candidate(site.value, 1);
            if (!candidate) continue; // not base64 here: later layers see it as it is
            if (candidate.declaredMime) ctx.declaredMime = candidate.declaredMime;
            outcome = await this.storeBase64(candidate.body, ctx, site.value);
          }
          if (outcome) this.replace(site.parent, site.key, placeholder(outcome));
        }
      }
    }
  }

  /** L3: every string that decodes to a recognised binary format, and raw bytes from native tools. */
  private async applyHeuristics(holder: Record<string, WorkValue>, rootKey: string, probe: boolean, parsedText: boolean): Promise<void> {
    for (const { parent, key, path } of this.heuristicSites(holder, rootKey, probe, parsedText)) {
      const value = (parent as Record<string | number, WorkValue>)[key]!;
      const vars = siblingVars(parent);
      const ctx: PayloadContext = { layer: 'heuristic', where: shortPath(path) || 'result', vars, ...nameFromSiblings(vars) };
      if (value instanceof BinaryValue) {
        this.replace(parent, key, placeholder(await this.storeBytes(value.bytes, ctx)));
        continue;
      }
      const candidate = base64Candidate(value as string, this.config.minBase64Chars);
      if (!candidate) continue;
      const outcome = await this.probeCandidate(value as string, candidate, ctx);
      if (outcome) this.replace(parent, key, placeholder(outcome));
    }
  }

  /** The places the heuristic looks at, in document order: see collectSites. */
  private heuristicSites(holder: Record<string, WorkValue>, rootKey: string, probe: boolean, parsedText: boolean): Site[] {
    const walk: SiteWalk = {
      sites: [],
      keys: [],
      minChars: probe ? this.config.minBase64Chars : Infinity,
      maxDepth: parsedText ? this.config.maxDepth : Infinity,
      tooDeep: (parent, key) => {
        // Parsed JSON text is not sanitized; hold it to the same depth limit.
        this.replace(parent, key, depthMarker(this.config.maxDepth));
        this.warn(`a subtree nested deeper than ${this.config.maxDepth} levels was replaced by a marker`);
      },
    };
    collectSites(walk, holder, rootKey, holder[rootKey]!, 0);
    return walk.sites;
  }

  /** A base64 candidate found by the heuristic: stored only when its bytes are a recognised format. */
  private async probeCandidate(raw: string, candidate: ReturnType<typeof base64Candidate> & object, ctx: PayloadContext): Promise<Outcome | undefined> {
    const memoized = this.memo.get(raw);
    if (memoized) return memoized;
    let clean: CleanBase64;
    try {
      clean = cleanBase64(candidate.body);
    } catch (err) {
      // A data: URL declared itself base64, so a bad body is corruption; a bare string was only a guess.
      if (candidate.dataUrl && err instanceof CorruptBase64Error) return this.corrupt(ctx, err, raw.length);
      return undefined;
    }
    let detected: DetectedType | undefined;
    try {
      detected = await detectBinary(decodeHead(clean));
    } catch (err) {
      if (candidate.dataUrl && err instanceof CorruptBase64Error) return this.corrupt(ctx, err, raw.length);
      return undefined;
    }
    // A data: URL is an explicit encoding, stored whatever its type; bare base64 needs a recognised format.
    if (!detected && !candidate.dataUrl) return undefined;
    if (candidate.declaredMime) ctx.declaredMime = candidate.declaredMime;
    return this.storeBase64(candidate.body, ctx, raw, { clean, detected });
  }

  /** L0: any string or subtree still over maxInlineChars becomes a text / JSON artifact + preview. */
  private async applySizeNet(parent: Record<string, WorkValue> | WorkValue[], key: string | number, path: string): Promise<void> {
    const value = (parent as Record<string | number, WorkValue>)[key]!;
    const max = this.config.maxInlineChars;
    // Sizes are capped at the limit: deciding "over or not" never walks more than `max` chars of a subtree.
    if (jsonSize(value, max) <= max || isOutcomePlaceholder(value)) return;
    const where = shortPath(path) || 'result';
    if (typeof value === 'string') {
      const outcome = await this.storeText(value, 'text/plain; charset=utf-8', { layer: 'size', where, vars: siblingVars(parent) });
      this.replace(parent, key, { ...placeholder(outcome), preview: previewText(value, this.config.previewChars) });
      return;
    }
    if (isPlainObject(value)) {
      // Keep the object and store only its big fields, when what is left (with a placeholder per big field) fits.
      const big: string[] = [];
      let residual = 1;
      for (const k of Object.keys(value)) {
        const size = jsonSize(value[k]!, max);
        if (size > max) big.push(k);
        residual += jsonSize(k) + 1 + (size > max ? PLACEHOLDER_CHARS : size) + 1;
        if (residual > max) break;
      }
      if (big.length > 0 && residual <= max) {
        for (const k of big) await this.applySizeNet(value, k, path ? `${path}.${k}` : k);
        return;
      }
    }
    const json = value as JsonValue;
    const budget = this.config.previewChars;
    const outcome = await this.storeText(JSON.stringify(json), 'application/json', { layer: 'size', where, vars: {} }, describeShape(json));
    this.replace(parent, key, { ...placeholder(outcome), preview: truncateToFit(json, (v) => measureChars(v, budget) <= budget, { fieldChars: 80, arrayItems: 3 }) });
  }

  // ---------------------------------------------------------------- storing

  private async storeBase64(body: string, ctx: PayloadContext, memoKey = body, known?: { clean: CleanBase64; detected: DetectedType | undefined }): Promise<Outcome> {
    const memoized = this.memo.get(memoKey);
    if (memoized) return memoized;
    const pending = this.storeBase64Once(body, ctx, known);
    this.memo.set(memoKey, pending);
    return pending;
  }

  private async storeBase64Once(body: string, ctx: PayloadContext, known?: { clean: CleanBase64; detected: DetectedType | undefined }): Promise<Outcome> {
    let clean: CleanBase64;
    try {
      clean = known?.clean ?? cleanBase64(body);
    } catch (err) {
      return this.corrupt(ctx, err, body.length);
    }
    const limit = this.config.maxArtifactBytes;
    if (clean.byteLength > limit) return this.tooLarge(ctx, clean.byteLength, known?.detected ?? (await this.headType(clean)));
    if (clean.byteLength === 0) return this.corrupt(ctx, new CorruptBase64Error('it is empty'), body.length);
    const failure: { error?: CorruptBase64Error } = {};
    try {
      if (clean.byteLength > this.config.streamDecodeAboveBytes) {
        const detected = known?.detected ?? (await this.headType(clean));
        return await this.put(ctx, clean.byteLength, detected, (o) => this.store.putStream(decodeStream(clean, failure), o));
      }
      const bytes = decodeClean(clean);
      return await this.put(ctx, bytes.byteLength, (await detectBinary(bytes)) ?? sniffText(bytes), (o) => this.store.putBytes(bytes, o));
    } catch (err) {
      // A stream that failed mid-way surfaces as the store's error; the decoder noted the real cause.
      const corruption = failure.error ?? (err instanceof CorruptBase64Error ? err : undefined);
      if (corruption) return this.corrupt(ctx, corruption, body.length);
      throw err;
    }
  }

  private async headType(clean: CleanBase64): Promise<DetectedType | undefined> {
    try {
      return await detectBinary(decodeHead(clean));
    } catch {
      return undefined;
    }
  }

  private storeBytes(bytes: Uint8Array, ctx: PayloadContext): Promise<Outcome> {
    const memoized = this.memo.get(bytes);
    if (memoized) return memoized;
    const pending = (async (): Promise<Outcome> => {
      if (bytes.byteLength > this.config.maxArtifactBytes) return this.tooLarge(ctx, bytes.byteLength, await detectBinary(bytes));
      if (bytes.byteLength === 0) return this.corrupt(ctx, new CorruptBase64Error('it is empty'), 0);
      return this.put(ctx, bytes.byteLength, (await detectBinary(bytes)) ?? sniffText(bytes), (o) => this.store.putBytes(bytes, o));
    })();
    this.memo.set(bytes, pending);
    return pending;
  }

  private storeText(text: string, mimeType: string, ctx: PayloadContext, shape?: string): Promise<Outcome> {
    const memoized = this.memo.get(text);
    if (memoized) return memoized;
    const pending = (async (): Promise<Outcome> => {
      const bytes = new TextEncoder().encode(text);
      if (bytes.byteLength > this.config.maxArtifactBytes) return this.tooLarge({ ...ctx, declaredMime: mimeType }, bytes.byteLength, undefined);
      return this.put({ ...ctx, declaredMime: mimeType }, bytes.byteLength, undefined, (o) => this.store.putBytes(bytes, o), { chars: text.length, ...(shape ? { shape } : {}) });
    })();
    this.memo.set(text, pending);
    return pending;
  }

  private async put(
    ctx: PayloadContext,
    sizeBytes: number,
    detected: DetectedType | undefined,
    write: (o: PutOptions) => Promise<ArtifactRef>,
    text?: { chars: number; shape?: string },
  ): Promise<Outcome> {
    const spec = ctx.spec;
    const specMime = spec && 'mimeType' in spec ? spec.mimeType : undefined;
    const sniffed = detected?.guessed ? detected : undefined;
    if (sniffed) detected = undefined;
    const mimeType = detected?.mime ?? specMime ?? ctx.declaredMime ?? sniffed?.mime ?? 'application/octet-stream';
    const label = spec?.contentType ?? (text?.shape ?? describeType(mimeType, detected?.ext));
    const vars: Record<string, string | number | boolean | undefined> = {
      ...ctx.vars,
      tool: this.toolName,
      mime_type: mimeType,
      content_type: label,
      type: text?.shape ?? describeType(mimeType, detected?.ext),
      ext: detected?.ext ?? extFor(mimeType),
      size_bytes: sizeBytes,
      size_human: humanSize(sizeBytes),
      field: ctx.where,
    };
    const templated = spec?.filename ? renderTemplate(spec.filename, vars) : undefined;
    const filename = templated ?? defaultFilename(ctx.name, this.toolName, detected?.ext ?? extFor(mimeType));
    const sourceNamed = templated !== undefined || ctx.name !== undefined;
    const source: Record<string, unknown> = { tool: this.toolName, ...(this.options.serverName ? { server: this.options.serverName } : {}) };
    if (ctx.where && ctx.layer !== 'blocks') source.field = ctx.where;
    if (detected && ctx.declaredMime && baseMime(ctx.declaredMime) !== detected.mime) source.declaredMimeType = ctx.declaredMime;
    let ref: ArtifactRef;
    try {
      ref = await write(this.putOptions({ mimeType, filename, source }));
    } catch (err) {
      if (isArtifactError(err) && (err.code === 'payload_too_large' || err.code === 'quota_exceeded')) {
        this.stats.notStored++;
        this.warn(`${this.toolName}: ${err.message}`);
        const summary = `${capitalize(label)} (${humanSize(sizeBytes)}) from ${this.toolName} was not stored: ${err.message}`;
        return { ok: false, error: 'not_stored', summary, details: { code: err.code, sizeBytes, mimeType } };
      }
      throw err;
    }
    this.record(ref, ctx.layer);
    vars.filename = ref.filename;
    vars.artifact_id = ref.id;
    const stored = !isUnstoredRef(ref);
    const summary = (spec?.summary ? renderTemplate(spec.summary, vars) : undefined) ?? defaultSummary(ctx, label, ref, this.toolName, sourceNamed, text?.chars);
    return { ok: true, ref, stored, summary: stored ? summary : `${summary} Not stored: no artifact store is configured, so these bytes cannot be downloaded.` };
  }

  private tooLarge(ctx: PayloadContext, sizeBytes: number, detected: DetectedType | undefined): Outcome {
    this.stats.notStored++;
    const mime = detected?.mime ?? ctx.declaredMime ?? 'application/octet-stream';
    const label = (ctx.spec?.contentType ?? describeType(mime, detected?.ext));
    const limit = this.config.maxArtifactBytes;
    this.warn(`${this.toolName}: a ${humanSize(sizeBytes)} payload is over maxArtifactBytes (${humanSize(limit)})`);
    const summary = `${capitalize(label)} of ${humanSize(sizeBytes)} from ${this.toolName}${ctx.where ? ` (${ctx.where})` : ''} was not stored: it is over the ${humanSize(limit)} artifact limit. Ask the tool for a smaller result, or raise maxArtifactBytes.`;
    return { ok: false, error: 'too_large', summary, details: { sizeBytes, limitBytes: limit, mimeType: mime } };
  }

  private corrupt(ctx: PayloadContext, err: unknown, chars: number): Outcome {
    this.stats.notStored++;
    const reason = err instanceof CorruptBase64Error ? err.message : String(err);
    this.warn(`${this.toolName}: corrupt base64 at ${ctx.where ?? 'result'}: ${reason}`);
    const summary = `The base64 payload from ${this.toolName}${ctx.where ? ` (${ctx.where})` : ''} could not be decoded: ${reason}. It was left out rather than passed on as garbage.`;
    return { ok: false, error: 'corrupt_base64', summary, details: { chars } };
  }
}

// ------------------------------------------------------------------ helpers

const PLACEHOLDER_CHARS = 1200;

const placeholder = (o: Outcome): Record<string, WorkValue> =>
  o.ok ? { artifact: modelRef(o.ref) as WorkValue, summary: o.summary } : { error: o.error, summary: o.summary, ...o.details };

interface Site {
  parent: Record<string, WorkValue> | WorkValue[];
  key: string | number;
  path: string;
}

interface SiteWalk {
  sites: Site[];
  /** Keys from the document root down to the current node. */
  keys: (string | number)[];
  minChars: number;
  maxDepth: number;
  tooDeep: (parent: Record<string, WorkValue> | WorkValue[], key: string | number) => void;
}

/**
 * Collects strings long enough to hold a payload, and raw bytes, in one synchronous pass that
 * allocates nothing per node: tool output is mostly small values the walk only passes by, and a
 * site's path is built only for the sites. A module-level function and not a closure, so V8 keeps
 * its optimized code from one call to the next (a fresh closure per call starts cold after every
 * GC: 5 ms instead of 1 ms over 7,000 rows). Recursion is bounded by maxDepth, at most 5000: deeper
 * parsed JSON is cut here, and toJsonSafe cut everything else.
 */
function collectSites(walk: SiteWalk, parent: Record<string, WorkValue> | WorkValue[], key: string | number, value: WorkValue, depth: number): void {
  if (typeof value === 'string') {
    if (value.length >= walk.minChars) walk.sites.push({ parent, key, path: pathOf(walk.keys) });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (value instanceof BinaryValue) {
    walk.sites.push({ parent, key, path: pathOf(walk.keys) });
    return;
  }
  if (depth >= walk.maxDepth) {
    walk.tooDeep(parent, key);
    return;
  }
  const { keys, minChars } = walk;
  // Values that cannot hold a payload are skipped here, without a call: most of a tool's output.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i]!;
      if (typeof item === 'string' ? item.length < minChars : item === null || typeof item !== 'object') continue;
      keys.push(i);
      collectSites(walk, value, i, item, depth + 1);
      keys.pop();
    }
  } else if (!isOutcomePlaceholder(value)) {
    for (const k of Object.keys(value)) {
      const item = value[k]!;
      if (typeof item === 'string' ? item.length < minChars : item === null || typeof item !== 'object') continue;
      keys.push(k);
      collectSites(walk, value, k, item, depth + 1);
      keys.pop();
    }
  }
}

/** `a.b[2].c` from the keys below the document root. */
function pathOf(keys: readonly (string | number)[]): string {
  let path = '';
  for (const key of keys) {
    path = typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
  }
  return path;
}

const TEXT_SNIFF_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Bytes no magic number names, but which are valid UTF-8 with no NUL: text (a source file from
 * GitHub's contents API, a CSV). Stored as text/plain rather than application/octet-stream, so a
 * browser shows it. A declared or configured type still wins over this guess.
 */
function sniffText(bytes: Uint8Array): DetectedType | undefined {
  if (bytes.byteLength > TEXT_SNIFF_MAX_BYTES || bytes.includes(0)) return undefined;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  return { mime: 'text/plain; charset=utf-8', ext: 'txt', guessed: true };
}

function isOutcomePlaceholder(v: WorkValue): boolean {
  return isPlainObject(v) && typeof v.summary === 'string' && (isPlainObject(v.artifact) || typeof v.error === 'string') && Object.keys(v).length <= 6;
}


const textBlock = (text: string): Block => ({ type: 'text', text });

/** Paths in summaries stay readable: `next.next.…next.payload` past 80 characters. */
function shortPath(path: string): string {
  return path.length <= 80 ? path : `${path.slice(0, 24)}…${path.slice(-55)}`;
}

function isCallToolResult(v: WorkValue): v is Record<string, WorkValue> {
  return isPlainObject(v) && Array.isArray(v.content) && v.content.every((b) => isPlainObject(b) && typeof b.type === 'string');
}

function toolSpecsFor(toolName: string, serverName: string | undefined, config: TransformConfig): ToolSpec[] {
  const own = config.tools[toolName];
  const specs = [...(own ? (Array.isArray(own) ? own : [own]) : []), ...presetSpecs(toolName, config.presets)];
  return specs.filter((s) => !s.server || !serverName || serverName.toLowerCase().includes(s.server.toLowerCase()));
}

function nameFromUri(uri: string): string | undefined {
  const path = uri.split(/[?#]/)[0]!;
  const last = path.slice(path.lastIndexOf('/') + 1);
  try {
    const decoded = decodeURIComponent(last);
    return decoded.length > 0 && decoded.length <= 255 ? decoded : undefined;
  } catch {
    return last || undefined;
  }
}

function nameFromSiblings(vars: Record<string, string | number | boolean>): { name?: string } {
  for (const key of ['filename', 'fileName', 'file_name', 'name', 'title', 'path']) {
    const v = vars[key];
    if (typeof v === 'string' && v.trim()) return { name: v.trim() };
  }
  return {};
}

function defaultFilename(name: string | undefined, toolName: string, ext: string | undefined): string {
  if (name) {
    const base = name.slice(name.lastIndexOf('/') + 1);
    return ext && !/\.[A-Za-z0-9]{1,8}$/.test(base) ? `${base}.${ext}` : base;
  }
  return ext ? `${toolName}.${ext}` : toolName;
}

const EXT_BY_MIME: Record<string, string> = {
  'text/plain': 'txt',
  'application/json': 'json',
  'text/csv': 'csv',
  'text/markdown': 'md',
  'text/html': 'html',
  'image/svg+xml': 'svg',
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
};

const baseMime = (mime: string) => mime.split(';')[0]!.trim().toLowerCase();
const extFor = (mime: string) => EXT_BY_MIME[baseMime(mime)];
const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function defaultSummary(ctx: PayloadContext, label: string, ref: ArtifactRef, toolName: string, sourceNamed: boolean, chars?: number): string {
  const size = chars !== undefined ? `${formatCount(chars)} chars, ${humanSize(ref.sizeBytes)}` : humanSize(ref.sizeBytes);
  const named = ref.filename && sourceNamed && ctx.layer !== 'size' ? ` '${ref.filename}'` : '';
  const from = ctx.layer === 'blocks' || ctx.layer === 'links' || !ctx.where || ctx.where === 'result' ? toolName : `${toolName} (${ctx.where})`;
  const lead = ctx.layer === 'size' ? `Large ${label}` : capitalize(label);
  return `${lead}${named} (${size}) from ${from}, stored as artifact ${ref.id}.`;
}

function describeShape(v: JsonValue): string {
  if (Array.isArray(v)) return `JSON array of ${formatCount(v.length)} items`;
  if (isPlainObject(v)) return `JSON object with ${formatCount(Object.keys(v).length)} keys`;
  return 'JSON';
}

function previewText(text: string, chars: number): string {
  if (text.length <= chars) return text;
  return `${text.slice(0, chars)}… [${formatCount(text.length - chars)} more chars in the artifact]`;
}

function linkLine(name: string | undefined, mime: string | undefined, size: number | undefined, uri: string): string {
  const facts = [mime ? describeType(mime) : undefined, size !== undefined ? humanSize(size) : undefined].filter(Boolean).join(', ');
  return `Resource${name ? ` '${name}'` : ''}${facts ? ` (${facts})` : ''} is available at ${uri}.`;
}

const readHint = (uri: string) => `To get its contents, read the resource ${uri} (MCP resources/read).`;

/** base64 → bytes in ~1 MiB chunks, for payloads too big to decode in one piece. */
function decodeStream(clean: CleanBase64, failure: { error?: CorruptBase64Error }): ReadableStream<Uint8Array> {
  const step = 1024 * 1024 * 4 / 3; // chars per ~1 MiB, a multiple of 4
  const chunkChars = Math.floor(step / 4) * 4;
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= clean.text.length) {
        controller.close();
        return;
      }
      const end = Math.min(clean.text.length, at + chunkChars);
      let chunk: Uint8Array;
      try {
        chunk = decodeClean(clean, at, end);
      } catch (err) {
        if (err instanceof CorruptBase64Error) failure.error = err;
        throw err;
      }
      at = end;
      controller.enqueue(chunk);
    },
  });
}
