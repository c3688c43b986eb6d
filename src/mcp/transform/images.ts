/**
 * Images for the model: which image blocks stay inline as MCP image content. The transformer's
 * `images` policy sets the limits (bytes, pixels on the long edge, images per result) and whether
 * any tool's images, none, or those of the tools a preset or `tools` entry names stay inline. An
 * inline image is stored too, so the person gets a link; one over a limit becomes a ref as any
 * other binary. The pixel size comes from the image's header (image-size, on bytes only).
 */
import { imageSize } from 'image-size';
import { formatBytes } from '../../core/bytes.js';
import type { ToolImages, ToolSpec, TransformConfig } from '../config.js';
import { cleanBase64, decodeClean, detectBinary } from '../detect.js';
import { isPlainObject } from '../paths.js';
import type { Block } from './typed-blocks.js';

/** One tool's image policy, resolved. */
export interface ImagePolicy {
  inline: boolean;
  maxBytes: number;
  maxEdge: number;
  maxPerResult: number;
}

/** The image types model APIs take as image content. */
const MODEL_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The policy for a tool: the first spec (config.tools, then presets) that has `images` overrides the
 * transformer's `images`, whose `inline: false` turns inline images off for every tool.
 */
export function imagePolicyFor(config: TransformConfig, specs: readonly ToolSpec[]): ImagePolicy {
  const own: ToolImages | undefined = specs.find((s) => s.images)?.images;
  const global = config.images;
  const inline = global.inline === false ? false : (own?.inline ?? global.inline === true);
  return {
    inline,
    maxBytes: own?.maxBytes ?? global.maxBytes,
    maxEdge: own?.maxEdge ?? global.maxEdge,
    maxPerResult: own?.maxPerResult ?? global.maxPerResult,
  };
}

export type InlineDecision =
  | { inline: true; mimeType: string; width: number; height: number }
  | { inline: false; reason?: string };

/**
 * Whether one image block stays inline, given how many this result already shows. A reason is given
 * when the policy wanted it inline and a limit said no; none when the policy does not apply (off
 * for this tool, an image meant for the user only, data that is not an image).
 */
export async function decideInline(block: Block, policy: ImagePolicy, shown: number): Promise<InlineDecision> {
  if (!policy.inline || typeof block.data !== 'string') return { inline: false };
  const audience = isPlainObject(block.annotations) ? block.annotations.audience : undefined;
  // An image the server marks for the user alone is not the model's: it gets the link.
  if (Array.isArray(audience) && !audience.includes('assistant')) return { inline: false };
  if (shown >= policy.maxPerResult) {
    if (policy.maxPerResult === 0) return { inline: false };
    const n = policy.maxPerResult;
    return { inline: false, reason: `only ${n} image${n === 1 ? '' : 's'} per result ${n === 1 ? 'is' : 'are'} shown` };
  }
  let bytes: Uint8Array;
  try {
    const clean = cleanBase64(block.data);
    if (clean.byteLength > policy.maxBytes)
      return { inline: false, reason: `it is over the ${formatBytes(policy.maxBytes)} limit for images shown` };
    bytes = decodeClean(clean);
  } catch {
    return { inline: false };
  }
  const detected = await detectBinary(bytes);
  if (!detected || !MODEL_IMAGE_TYPES.has(detected.mime))
    return { inline: false, reason: 'models take PNG, JPEG, GIF and WebP images only' };
  let width: number | undefined;
  let height: number | undefined;
  try {
    ({ width, height } = imageSize(bytes));
  } catch {
    // A header image-size cannot read: the size is unknown, so the limit cannot be checked.
  }
  if (!width || !height) return { inline: false, reason: 'its pixel size could not be read' };
  if (Math.max(width, height) > policy.maxEdge)
    return { inline: false, reason: `${width}×${height} px is over the ${policy.maxEdge} px limit for images shown` };
  return { inline: true, mimeType: detected.mime, width, height };
}
