/**
 * LangChain message content ⇄ MCP content, so that a LangChain tool's blocks go through the MCP
 * transformer (its typed-blocks layer and image policy) and come back as LangChain's standard blocks.
 *
 * LangChain writes the same media in several shapes over its versions and providers: the standard
 * `{ type: 'image', data, mimeType }` (data base64 or bytes), the older data block
 * `{ type: 'image', source_type: 'base64', data, mime_type }`, OpenAI's
 * `{ type: 'image_url', image_url: { url: 'data:…' } }` and Anthropic's
 * `{ type: 'image', source: { type: 'base64', media_type, data } }`. All of them with inline bytes
 * become MCP blocks; blocks that only point somewhere (a URL, a provider file id) stay as they are.
 */
import { encodeBase64 } from '../core/base64.js';

/** A block of LangChain message content, as it comes: any object with a `type`. */
export type LcBlock = { type: string } & Record<string, unknown>;

/** An MCP content block, as the transformer reads and writes them. */
export type McpBlock = { type: string } & Record<string, unknown>;

const MEDIA = new Set(['image', 'audio', 'video', 'file']);

export const isBlockArray = (v: unknown): v is LcBlock[] =>
  Array.isArray(v) && v.length > 0 && v.every((b) => b !== null && typeof b === 'object' && typeof b.type === 'string');

/** Inline media of a LangChain block: its kind, base64 data and type; undefined for any other block. */
export function inlineMedia(
  block: LcBlock,
): { kind: string; data: string; mimeType?: string; filename?: string } | undefined {
  const mimeOf = (...candidates: unknown[]) => candidates.find((c): c is string => typeof c === 'string' && c !== '');
  const filename = mimeOf(
    block.filename,
    block.name,
    (block.metadata as Record<string, unknown> | undefined)?.filename,
  );
  const named = filename ? { filename } : {};
  if (MEDIA.has(block.type)) {
    const data = block.data;
    const mimeType = mimeOf(block.mimeType, block.mime_type);
    if (typeof data === 'string' && data !== '' && (block.source_type === undefined || block.source_type === 'base64'))
      return { kind: block.type, data, ...(mimeType ? { mimeType } : {}), ...named };
    if (data instanceof Uint8Array)
      return { kind: block.type, data: encodeBase64(data), ...(mimeType ? { mimeType } : {}), ...named };
    const source = block.source as Record<string, unknown> | undefined;
    if (source && source.type === 'base64' && typeof source.data === 'string') {
      const media = mimeOf(source.media_type, source.mimeType);
      return {
        kind: block.type === 'file' ? 'file' : block.type,
        data: source.data,
        ...(media ? { mimeType: media } : {}),
        ...named,
      };
    }
    if (typeof block.url === 'string' && block.url.startsWith('data:')) return dataUrl(block.type, block.url, named);
    return undefined;
  }
  if (block.type === 'image_url') {
    const url = typeof block.image_url === 'string' ? block.image_url : (block.image_url as { url?: unknown })?.url;
    if (typeof url === 'string' && url.startsWith('data:')) return dataUrl('image', url, named);
  }
  return undefined;
}

function dataUrl(kind: string, url: string, named: { filename?: string }) {
  const comma = url.indexOf(',');
  const header = url.slice(5, comma);
  if (comma < 0 || !header.endsWith(';base64')) return undefined;
  const mimeType = header.split(';')[0];
  return { kind, data: url.slice(comma + 1), ...(mimeType ? { mimeType } : {}), ...named };
}

/**
 * LangChain blocks as an MCP CallToolResult's content. Text stays text; inline media become image,
 * audio or embedded-resource blocks; any other block is passed as its JSON, as text.
 */
export function toMcpContent(blocks: LcBlock[]): McpBlock[] {
  return blocks.map((block, i): McpBlock => {
    if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text };
    const media = inlineMedia(block);
    if (media && (media.kind === 'image' || media.kind === 'audio'))
      return { type: media.kind, data: media.data, mimeType: media.mimeType ?? 'application/octet-stream' };
    if (media) {
      const name = media.filename ?? `${media.kind}-${i + 1}`;
      return {
        type: 'resource',
        resource: {
          uri: `attachment:///${encodeURIComponent(name)}`,
          blob: media.data,
          ...(media.mimeType ? { mimeType: media.mimeType } : {}),
        },
      };
    }
    return { type: 'text', text: JSON.stringify(block) };
  });
}

/**
 * The transformer's MCP content back as LangChain content: text blocks, and the standard image block
 * for each image the policy kept inline. A `resource_link` to a stored artifact is left out (its ref
 * is the ToolMessage's artifact and its summary names it); another server's link becomes a line of text.
 */
export function fromMcpContent(blocks: McpBlock[]): { text: string[]; content: LcBlock[] } {
  const content: LcBlock[] = [];
  const text: string[] = [];
  for (const block of blocks) {
    if (block.type === 'text' && typeof block.text === 'string') {
      content.push({ type: 'text', text: block.text });
      text.push(block.text);
    } else if ((block.type === 'image' || block.type === 'audio') && typeof block.data === 'string') {
      content.push({ type: block.type, mimeType: String(block.mimeType), data: block.data });
    } else if (block.type === 'resource_link') {
      if (typeof block.uri === 'string' && block.uri.startsWith('artifact://')) continue;
      const line = `Resource ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}`;
      content.push({ type: 'text', text: line });
      text.push(line);
    } else {
      const line = JSON.stringify(block);
      content.push({ type: 'text', text: line });
      text.push(line);
    }
  }
  return { text, content };
}
