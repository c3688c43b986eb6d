/**
 * transformToolResult: a raw tool result in, what the model should see out. Binary payloads are
 * stored as artifacts and replaced by refs and one-line summaries, big text and JSON are stored with
 * a preview, small data stays inline. This module runs the layers in order; each has its own module
 * and is called by its name (the `Layer` in stats and events). The design numbers them:
 *
 * | Design | Layer (stats key)             | Module              | Acts on                                   |
 * | ------ | ----------------------------- | ------------------- | ----------------------------------------- |
 * | L5     | custom transform (`custom`)   | custom-transform.ts | the whole raw result, when configured     |
 * | L4     | per-tool fields (`fields`)    | per-tool-fields.ts  | field paths named by config.tools/presets |
 * | L1     | resource links (`links`)      | resource-links.ts   | resource_link blocks                      |
 * | L2     | typed blocks (`blocks`)       | typed-blocks.ts     | image, audio and embedded resource blocks |
 * | L3     | heuristic (`heuristic`)       | heuristic.ts        | base64 found anywhere by magic bytes      |
 * | L0     | size net (`size`)             | size-net.ts         | whatever is still over maxInlineChars     |
 *
 * The rows are in run order. payloads.ts stores what any layer finds; run.ts holds one call's state.
 */
import type { ArtifactRef } from '../../core/schemas.js';
import type { TransformOptions } from '../config.js';
import { base64Candidate } from '../detect.js';
import { jsonSize, toJsonSafe, type WorkValue } from '../json.js';
import { parseJsonText } from '../parse-text.js';
import { isPlainObject } from '../paths.js';
import { runCustomTransform } from './custom-transform.js';
import { applyHeuristics, probeCandidate } from './heuristic.js';
import { holderOf, storeText } from './payloads.js';
import { applyFieldSpecs } from './per-tool-fields.js';
import { previewText } from './previews.js';
import { processResourceLink } from './resource-links.js';
import { TransformRun, type TransformStats } from './run.js';
import { applySizeNet } from './size-net.js';
import { blocksFor, processEmbeddedResource, processMediaBlock, textBlock, type Block } from './typed-blocks.js';

export { imagePolicyFor } from './images.js';
export { toolSpecsFor } from './per-tool-fields.js';
export { hideBase64Deep } from './previews.js';
export type { TransformStats } from './run.js';
export { artifactUri } from './typed-blocks.js';

export interface TransformResult<T = unknown> {
  /** What the model should see: a CallToolResult for MCP input, transformed JSON for native input. */
  result: T;
  /** Every ArtifactRef stored, once each. */
  artifacts: ArtifactRef[];
  stats: TransformStats;
}

/**
 * Turns a raw tool result into what the model should see, running the layers in the order of the
 * table above. Never throws on odd input (cycles, depth, corrupt base64); store failures other than
 * "too large" and quota refusals reject, so no payload is dropped silently.
 *
 * @example
 * const { result, artifacts, stats } =
 *   await transformToolResult('download_workbook', raw, { store, serverName: 'tableau' });
 */
export async function transformToolResult<T = unknown>(
  toolName: string,
  result: unknown,
  options: TransformOptions = {},
): Promise<TransformResult<T>> {
  const run = new TransformRun(toolName, options);
  const { maxDepth } = run.config;
  const { value, report } = toJsonSafe(result, maxDepth);
  if (report.circular > 0) run.warn(`${report.circular} circular reference(s) replaced by a marker`);
  if (report.depthLimited > 0) {
    run.warn(`${report.depthLimited} subtree(s) nested deeper than ${maxDepth} levels replaced by a marker`);
  }
  run.stats.charsBefore = jsonSize(value);

  let output: WorkValue;
  const custom = await runCustomTransform(run, result);
  if (custom !== undefined) {
    // The custom transform has the last word: only raw bytes it left in the value are stored, nothing else changes.
    output = await processDocument(run, toJsonSafe(custom, maxDepth).value, {
      fieldsLayer: false,
      heuristics: false,
      sizeNet: false,
    });
  } else if (isCallToolResult(value)) {
    output = await processCallToolResult(run, value);
  } else if (
    isPlainObject(value) &&
    'toolResult' in value &&
    Object.keys(value).every((k) => k === 'toolResult' || k === '_meta')
  ) {
    // The SDK's legacy compatibility shape.
    value.toolResult = await processDocument(run, value.toolResult!);
    output = value;
  } else {
    output = await processDocument(run, value);
  }

  run.stats.charsAfter = jsonSize(output);
  run.stats.artifacts = run.artifacts.size;
  return { result: output as T, artifacts: [...run.artifacts.values()], stats: run.stats };
}

interface DocumentOptions {
  fieldsLayer?: boolean;
  heuristics?: boolean;
  sizeNet?: boolean;
  /** The document was parsed from a text block, so it was not sanitized by toJsonSafe. */
  parsedText?: boolean;
}

/**
 * Per-tool fields, heuristic and size net over one JSON document we own (mutated in place; the root
 * may be replaced, so use the return value).
 */
async function processDocument(run: TransformRun, root: WorkValue, opts: DocumentOptions = {}): Promise<WorkValue> {
  const holder: Record<string, WorkValue> = { root };
  if (opts.fieldsLayer !== false) await applyFieldSpecs(run, holder);
  await applyHeuristics(
    run,
    holder,
    'root',
    opts.heuristics !== false && run.config.heuristics,
    opts.parsedText === true,
  );
  if (opts.sizeNet !== false) await applySizeNet(run, holder, 'root', '');
  return holder.root!;
}

function isCallToolResult(v: WorkValue): v is Record<string, WorkValue> {
  return (
    isPlainObject(v) &&
    Array.isArray(v.content) &&
    v.content.every((b) => isPlainObject(b) && typeof b.type === 'string')
  );
}

/** Each content block through its layer, and structuredContent as a JSON document. */
async function processCallToolResult(
  run: TransformRun,
  result: Record<string, WorkValue>,
): Promise<Record<string, WorkValue>> {
  const out: WorkValue[] = [];
  // What structuredContent and the text blocks were, for when an inline image displaces the structure.
  const hasImages = (result.content as WorkValue[]).some((b) => isPlainObject(b) && b.type === 'image');
  const structuredJson =
    hasImages && isPlainObject(result.structuredContent) ? JSON.stringify(result.structuredContent) : undefined;
  const texts = structuredJson
    ? (result.content as WorkValue[]).flatMap((b) =>
        isPlainObject(b) && b.type === 'text' && typeof b.text === 'string' ? [b.text] : [],
      )
    : [];
  for (const block of result.content as WorkValue[]) {
    if (!isPlainObject(block)) {
      out.push(block);
      continue;
    }
    for (const replaced of await processBlock(run, block)) out.push(replaced);
  }
  result.content = out;
  if (isPlainObject(result.structuredContent)) {
    const structured = await processDocument(run, result.structuredContent);
    if (run.inlineImages > 0) {
      // Hosts show one of an image and structuredContent, not both (anthropics/claude-code#54737): the
      // image stays, and the structure goes to a text block unless one already holds it.
      if (!textHolds(texts, structuredJson!)) out.push(textBlock(JSON.stringify(structured)));
      delete result.structuredContent;
    } else {
      // structuredContent must stay an object.
      result.structuredContent = isPlainObject(structured) ? structured : { value: structured };
    }
  }
  return result;
}

/** Does one of these texts hold this JSON (the serialized copy the spec asks servers to add)? */
function textHolds(texts: readonly string[], json: string): boolean {
  return texts.some((text) => {
    const trimmed = text.trim();
    if (!trimmed.startsWith('{')) return false;
    try {
      return JSON.stringify(JSON.parse(trimmed)) === json;
    } catch {
      return false;
    }
  });
}

async function processBlock(run: TransformRun, block: Block): Promise<Block[]> {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? processTextBlock(run, block, block.text) : [block];
    case 'image':
    case 'audio':
      return processMediaBlock(run, block);
    case 'resource':
      return processEmbeddedResource(run, block);
    case 'resource_link':
      return processResourceLink(run, block);
    default:
      return [block];
  }
}

/**
 * A text block: JSON text is walked as a document (per-tool fields, heuristic, size net); bare base64
 * goes to the heuristic; other text over maxInlineChars to the size net.
 */
async function processTextBlock(run: TransformRun, block: Block, text: string): Promise<Block[]> {
  const trimmed = text.trim();
  const first = trimmed[0];
  if ((first === '{' || first === '[') && (trimmed.endsWith('}') || trimmed.endsWith(']'))) {
    let doc: WorkValue | undefined;
    try {
      doc = parseJsonText(trimmed) as WorkValue;
    } catch {
      doc = undefined;
    }
    if (doc !== undefined) {
      const before = run.edits;
      const processed = await processDocument(run, doc, { parsedText: true });
      if (run.edits === before) return [block];
      const indent = /^[{[]\s*\n(\s+)/.exec(trimmed)?.[1]?.length ?? 0;
      return [{ ...block, text: JSON.stringify(processed, null, indent > 0 && indent <= 8 ? indent : undefined) }];
    }
  }
  if (run.config.heuristics) {
    const candidate = base64Candidate(trimmed, run.config.minBase64Chars);
    if (candidate) {
      const outcome = await probeCandidate(run, trimmed, candidate, { layer: 'heuristic', vars: {} });
      if (outcome) return blocksFor(outcome, block);
    }
  }
  if (text.length > run.config.maxInlineChars) {
    const outcome = await storeText(run, text, 'text/plain; charset=utf-8', { layer: 'size', vars: {} });
    const preview = previewText(text, run.config.previewChars, holderOf(outcome));
    return blocksFor(outcome, block, `\n\nPreview:\n${preview}`);
  }
  return [block];
}
