/**
 * What a host sees of an upstream's answer: a tool result through transformToolResult, then
 * clampObservation, then one block of download links; a resource read as resources/read contents.
 * Binary and oversized output becomes a summary and an `artifact://` link; images a tool's policy
 * keeps for the model stay inline beside their link.
 */
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { ArtifactStore } from '../../client/artifact-store.js';
import { formatBytes } from '../../core/bytes.js';
import type { ArtifactRef } from '../../core/schemas.js';
import type { TransformConfigInput } from '../config.js';
import { clampObservation } from '../guardrail.js';
import type { ResourceRead } from '../resources.js';
import { artifactUri, transformToolResult } from '../transform/index.js';
import { causeOf, type GatewayLog } from './log.js';
import type { Upstream } from './upstream.js';

const DEFAULT_LINK_TTL_SECONDS = 24 * 3600;
const MAX_LINKS = 5;

type ContentBlock = CallToolResult['content'][number];

/** What shaping one answer needs: the caller's store, and the server's settings and resources. */
export interface ObserveDeps {
  /** Where the caller's artifacts go. */
  store: ArtifactStore;
  log: GatewayLog;
}

/** One tool call's raw result and where it came from. */
export interface ToolAnswer {
  upstream: Upstream;
  /** The server's own name for the tool. */
  tool: string;
  /** The name the host called it by. */
  hostName: string;
  raw: CallToolResult;
  /** The transformer's config for this server. */
  transform: TransformConfigInput;
  /** Reads one of the server's resources, for the transformer's auto-read policy. */
  readResource(uri: string): Promise<ReadResourceResult>;
}

/** transformToolResult, then clampObservation, then download links: what the host sees of a result. */
export async function observeToolResult(deps: ObserveDeps, answer: ToolAnswer): Promise<CallToolResult> {
  const { store } = deps;
  const { upstream, raw } = answer;
  const settings = upstream.entry.artifacts ?? {};
  const transformed = await transformToolResult<CallToolResult>(answer.tool, raw, {
    store,
    serverName: upstream.name,
    config: answer.transform,
    readResource: answer.readResource,
  });
  let result = transformed.result;
  const artifacts = [...transformed.artifacts];
  // Images the transformer kept for the model are within the image limits, not the text budget.
  const images = (result.content ?? []).filter((b) => b.type === 'image');
  const clamp = await clampObservation<Record<string, unknown>>(
    images.length > 0 ? { ...result, content: result.content.filter((b) => b.type !== 'image') } : result,
    {
      store,
      tool: answer.hostName,
      // Over budget is always stored whole: the host gets the ref, a summary and a preview.
      config: { viewTools: true, ...settings.guardrail, autoArtifactThreshold: 0 },
    },
  );
  if (clamp.clamped) {
    result = {
      content: [
        ...images,
        { type: 'text', text: JSON.stringify(clamp.observation) },
        ...(clamp.artifact ? [linkBlock(clamp.artifact)] : []),
      ],
      ...(result.structuredContent !== undefined ? { structuredContent: clamp.observation } : {}),
      ...(raw.isError ? { isError: true } : {}),
    };
    if (clamp.artifact) artifacts.push(clamp.artifact);
  }
  if (settings.downloadLinks !== false) {
    const links = await downloadLinks(deps, artifacts, settings.linkTtlSeconds ?? DEFAULT_LINK_TTL_SECONDS);
    if (links) result = { ...result, content: [...(result.content ?? []), links] };
  }
  return result;
}

/** A bridge read as resources/read contents: inline text as it was, stored bytes as summary and link. */
export async function resourceContents(
  deps: ObserveDeps,
  upstream: Upstream,
  read: ResourceRead,
): Promise<ReadResourceResult> {
  const contents: ReadResourceResult['contents'] = [];
  for (const block of read.content) {
    if (block.type === 'resource' && block.resource && typeof block.resource === 'object')
      contents.push(block.resource as ReadResourceResult['contents'][number]);
    else if (block.type === 'text' && typeof block.text === 'string')
      contents.push({ uri: read.uri, mimeType: 'text/plain', text: block.text });
    else if (block.type === 'resource_link' && typeof block.uri === 'string')
      contents.push({ uri: read.uri, mimeType: 'text/plain', text: `Stored as ${block.uri}` });
  }
  const settings = upstream.entry.artifacts ?? {};
  if (settings.downloadLinks !== false) {
    const links = await downloadLinks(deps, read.artifacts, settings.linkTtlSeconds ?? DEFAULT_LINK_TTL_SECONDS);
    if (links?.type === 'text') contents.push({ uri: read.uri, mimeType: 'text/plain', text: links.text });
  }
  return { contents, _meta: { 'artifact-store/artifacts': read.artifacts.map((a) => artifactUri(a.id)) } };
}

/** One text block for the person in the chat: a signed link per stored artifact. */
async function downloadLinks(
  { store, log }: ObserveDeps,
  artifacts: ArtifactRef[],
  ttl: number,
): Promise<ContentBlock | undefined> {
  if (artifacts.length === 0 || !store.url || !store.capabilities.signedUrls) return undefined;
  const lines: string[] = [];
  const unique = [...new Map(artifacts.map((a) => [a.id, a])).values()];
  for (const ref of unique.slice(0, MAX_LINKS)) {
    try {
      const link = await store.url(ref.id, { expiresIn: ttl });
      lines.push(
        `Download ${ref.filename ?? ref.id} (${formatBytes(ref.sizeBytes)}), valid until ${link.urlExpiresAt}: ${link.url}`,
      );
    } catch (err) {
      // The ref keeps its summary and artifact:// link; only the person's download link is missing.
      log(`the download link for ${ref.id} is left out: the store could not sign it: ${causeOf(err)}`, 'warn');
    }
  }
  if (unique.length > MAX_LINKS) lines.push(`${unique.length - MAX_LINKS} more: ask artifact_url for their links.`);
  if (lines.length === 0) return undefined;
  return { type: 'text', text: lines.join('\n'), annotations: { audience: ['user'], priority: 0.2 } };
}

function linkBlock(ref: ArtifactRef): ContentBlock {
  return {
    type: 'resource_link',
    uri: artifactUri(ref.id),
    name: ref.filename ?? ref.id,
    mimeType: ref.mimeType,
    size: ref.sizeBytes,
  };
}
