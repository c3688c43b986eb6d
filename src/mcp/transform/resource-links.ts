/**
 * The resource links layer: a resource_link block stays a lazy link, with a line telling the model how
 * to read it; it is read (and its contents stored like typed blocks) only when the auto-read policy
 * allows: a declared size under autoReadIfSizeUnderBytes and a way to read resources.
 */
import { formatBytes } from '../../core/bytes.js';
import type { WorkValue } from '../json.js';
import { isPlainObject } from '../paths.js';
import { describeType } from '../summary.js';
import { nameFromUri } from './names.js';
import { holderOf, storeBase64, storeText, type PayloadContext } from './payloads.js';
import { previewText } from './previews.js';
import type { TransformRun } from './run.js';
import { ARTIFACT_URI, blocksFor, textBlock, type Block } from './typed-blocks.js';

export async function processResourceLink(run: TransformRun, block: Block): Promise<Block[]> {
  const uri = typeof block.uri === 'string' ? block.uri : undefined;
  if (!uri || uri.startsWith(ARTIFACT_URI)) return [block];
  const size = typeof block.size === 'number' ? block.size : undefined;
  const name = typeof block.name === 'string' ? block.name : nameFromUri(uri);
  const mime = typeof block.mimeType === 'string' ? block.mimeType : undefined;
  const policy = run.config.autoReadIfSizeUnderBytes;
  if (policy > 0 && size !== undefined && size < policy && run.options.readResource) {
    try {
      const read = await run.options.readResource(uri);
      return await blocksForReadResource(run, uri, name, read.contents as unknown as WorkValue[]);
    } catch (err) {
      const reason = (err as Error)?.message ?? String(err);
      run.warn(`auto-read of ${uri} failed: ${reason}`);
      const text = `${linkLine(name, mime, size, uri)} Reading it failed (${reason}); the link is kept. ${readHint(uri)}`;
      return [block, textBlock(text)];
    }
  }
  return [block, textBlock(`${linkLine(name, mime, size, uri)} It was not read. ${readHint(uri)}`)];
}

/** The contents of a resource read by the policy: blobs stored, text inline under inlineTextIfUnderChars. */
async function blocksForReadResource(
  run: TransformRun,
  uri: string,
  name: string | undefined,
  contents: WorkValue[],
): Promise<Block[]> {
  const out: Block[] = [];
  for (const content of contents) {
    if (!isPlainObject(content)) continue;
    const contentUri = typeof content.uri === 'string' ? content.uri : uri;
    const mime = typeof content.mimeType === 'string' ? content.mimeType : undefined;
    const ctx: PayloadContext = {
      layer: 'links',
      where: `resource ${contentUri}`,
      vars: { uri: contentUri, ...(name ? { name } : {}) },
      ...(name ? { name } : {}),
      ...(mime ? { declaredMime: mime } : {}),
    };
    if (typeof content.blob === 'string') {
      out.push(...blocksFor(await storeBase64(run, content.blob, ctx), {}));
    } else if (typeof content.text === 'string') {
      if (content.text.length < run.config.inlineTextIfUnderChars) out.push({ type: 'resource', resource: content });
      else {
        const outcome = await storeText(run, content.text, mime ?? 'text/plain; charset=utf-8', ctx);
        const preview = previewText(content.text, run.config.previewChars, holderOf(outcome));
        out.push(...blocksFor(outcome, {}, `\n\nPreview:\n${preview}`));
      }
    }
  }
  return out.length > 0 ? out : [textBlock(`Resource ${uri} was read but held no contents.`)];
}

function linkLine(name: string | undefined, mime: string | undefined, size: number | undefined, uri: string): string {
  const facts = [mime ? describeType(mime) : undefined, size !== undefined ? formatBytes(size) : undefined]
    .filter(Boolean)
    .join(', ');
  return `Resource${name ? ` '${name}'` : ''}${facts ? ` (${facts})` : ''} is available at ${uri}.`;
}

const readHint = (uri: string) => `To get its contents, read the resource ${uri} (MCP resources/read).`;
