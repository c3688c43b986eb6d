/**
 * The typed blocks layer: a CallToolResult's image and audio blocks, and embedded resources holding a
 * blob (or text over inlineTextIfUnderChars), become artifacts: a text block with the summary and a
 * resource_link to artifact://{id} take their place.
 */
import type { BlockSpec } from '../config.js';
import type { WorkValue } from '../json.js';
import { isPlainObject } from '../paths.js';
import { nameFromUri } from './names.js';
import { holderOf, storeBase64, storeText, type Outcome } from './payloads.js';
import { previewText } from './previews.js';
import type { TransformRun } from './run.js';
import { decideInline, type InlineDecision } from './images.js';

/** A block of a CallToolResult, loosely typed: results come from servers we do not control. */
export type Block = Record<string, WorkValue>;

export const ARTIFACT_URI = 'artifact://';
export const artifactUri = (id: string): string => `${ARTIFACT_URI}${id}`;

export const textBlock = (text: string): Block => ({ type: 'text', text });

/** The blocks that replace a payload block: summary text (+ preview) and a link to the artifact. */
export function blocksFor(outcome: Outcome, original: Block, extraText = ''): Block[] {
  const annotations: Block = isPlainObject(original.annotations) ? { annotations: original.annotations } : {};
  if (!outcome.ok) return [{ type: 'text', text: outcome.summary + extraText, ...annotations }];
  const text: Block = { type: 'text', text: outcome.summary + extraText, ...annotations };
  if (!outcome.stored) return [text];
  const ref = outcome.ref;
  const link: Block = {
    type: 'resource_link',
    uri: artifactUri(ref.id),
    name: ref.filename ?? ref.id,
    mimeType: ref.mimeType,
    size: ref.sizeBytes,
    ...annotations,
  };
  return [text, link];
}

/** What ends the summary's sentence before another is added: a template may leave it open. */
const stop = (outcome: Outcome): string => (/[.!?]$/.test(outcome.summary) ? '' : '.');

/** How the first spec that has one names and summarises this tool's blocks. */
function blockSpec(run: TransformRun): BlockSpec | undefined {
  for (const spec of run.specs) if (spec.blocks) return spec.blocks;
  return undefined;
}

/**
 * Image and audio blocks become artifacts. An image the policy keeps for the model (run.images) stays
 * inline as well, ahead of its summary and link, with the type its bytes have.
 */
export async function processMediaBlock(run: TransformRun, block: Block): Promise<Block[]> {
  const kind = block.type as 'image' | 'audio';
  if (typeof block.data !== 'string') {
    run.warn(`${kind} block without base64 data`);
    return [textBlock(`The ${kind} block from ${run.toolName} had no base64 data and was dropped.`)];
  }
  const declaredMime = typeof block.mimeType === 'string' ? block.mimeType : undefined;
  const decision: InlineDecision =
    kind === 'image' ? await decideInline(block, run.images, run.inlineImages) : { inline: false };
  if (decision.inline) run.inlineImages++;
  const outcome = await storeBase64(run, block.data, {
    layer: 'blocks',
    where: `${kind} block`,
    spec: blockSpec(run),
    vars: {},
    ...(declaredMime ? { declaredMime } : {}),
  });
  if (!decision.inline) {
    const reason = decision.reason && outcome.ok ? `${stop(outcome)} Not shown inline: ${decision.reason}.` : '';
    return blocksFor(outcome, block, reason);
  }
  const image: Block = { ...block, mimeType: decision.mimeType };
  return [
    image,
    ...blocksFor(outcome, block, `${stop(outcome)} Shown above (${decision.width}×${decision.height} px).`),
  ];
}

/** Embedded resources: a blob is stored; text stays inline under inlineTextIfUnderChars. */
export async function processEmbeddedResource(run: TransformRun, block: Block): Promise<Block[]> {
  const resource = block.resource;
  if (!isPlainObject(resource)) return [block];
  const uri = typeof resource.uri === 'string' ? resource.uri : undefined;
  const declaredMime = typeof resource.mimeType === 'string' ? resource.mimeType : undefined;
  const name = uri ? nameFromUri(uri) : undefined;
  const vars = { ...(uri ? { uri } : {}), ...(name ? { name } : {}) };
  if (typeof resource.blob === 'string') {
    const outcome = await storeBase64(run, resource.blob, {
      layer: 'blocks',
      where: uri ? `resource ${uri}` : 'embedded resource',
      spec: blockSpec(run),
      vars,
      ...(declaredMime ? { declaredMime } : {}),
      ...(name ? { name } : {}),
    });
    return blocksFor(outcome, block);
  }
  if (typeof resource.text === 'string' && resource.text.length >= run.config.inlineTextIfUnderChars) {
    const outcome = await storeText(run, resource.text, declaredMime ?? 'text/plain; charset=utf-8', {
      layer: 'blocks',
      where: uri ? `resource ${uri}` : 'embedded resource',
      spec: blockSpec(run),
      vars,
      ...(name ? { name } : {}),
    });
    const preview = previewText(resource.text, run.config.previewChars, holderOf(outcome));
    return blocksFor(outcome, block, `\n\nPreview:\n${preview}`);
  }
  return [block];
}
