import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import type { ArtifactEvent, ArtifactStore } from '../client/artifact-store.js';
import { encodeBase64 } from '../core/base64.js';
import { formatBytes } from '../core/bytes.js';
import { isArtifactError } from '../core/errors.js';
import { isArtifactId } from '../core/ids.js';
import type { ArtifactRef } from '../core/schemas.js';
import { artifactToolDefinitions, callArtifactTool } from './artifact-tools.js';

/** MCP's "resource not found" error code (the spec's -32002). */
export const RESOURCE_NOT_FOUND = -32002;

const ARTIFACT_URI = 'artifact://';
const DEFAULT_MAX_READ_BYTES = 8 * 1024 * 1024;

export interface ArtifactMcpServerOptions {
  /** Reported at initialize. Default "artifact-store". */
  name?: string;
  version?: string;
  /** resources/list page size. Default 50. */
  pageSize?: number;
  /**
   * Largest artifact resources/read returns inline (as base64 or text). Bigger ones are refused with
   * a message that points at the artifact_url tool. Default 8 MiB: stdio clients cap a message at 10 MB.
   */
  maxReadBytes?: number;
  /**
   * Where deletions, evictions and expiries come from. Default: the store's own `events()` when it
   * has one. The service's /mcp mount passes its outbox, the same feed as /v1/events.
   */
  events?: (signal: AbortSignal) => AsyncIterable<Pick<ArtifactEvent, 'type' | 'ref'>>;
  /** Characters a read, search or query answer may take (the host's observation budget). Default: the service's. */
  budget?: number;
  /** Called when the update feed fails. Default: ignore. */
  onError?: (err: unknown) => void;
}

export interface ArtifactMcpServer {
  /** The SDK server: connect it to any transport (stdio, Streamable HTTP, in-memory). */
  server: Server;
  /** Stops the update feed. Closing the transport is the caller's. */
  close(): Promise<void>;
}

const uriOf = (id: string) => `${ARTIFACT_URI}${id}`;

function idOf(uri: string): string {
  const id = uri.startsWith(ARTIFACT_URI) ? uri.slice(ARTIFACT_URI.length) : '';
  if (!isArtifactId(id))
    throw new McpError(
      RESOURCE_NOT_FOUND,
      `Resource not found: ${uri}. Artifact uris look like artifact://{namespace}_{24 hex}; list them with resources/list.`,
    );
  return id;
}

const isText = (mime: string) =>
  /^text\//i.test(mime) || /^application\/([\w.+-]*\+)?(json|xml|yaml|javascript)(;|$)/i.test(mime);

function resourceOf(ref: ArtifactRef): Resource {
  return {
    uri: uriOf(ref.id),
    name: ref.filename ?? ref.id,
    title: ref.filename ?? ref.id,
    mimeType: ref.mimeType,
    size: ref.sizeBytes,
    description: `${formatBytes(ref.sizeBytes)} ${ref.mimeType}, stored ${ref.createdAt}${ref.expiresAt ? `, expires ${ref.expiresAt}` : ''}${ref.source?.tool ? `, from ${String(ref.source.tool)}` : ''}`,
    _meta: { sha256: ref.sha256, namespace: ref.namespace },
  };
}

export { ARTIFACT_TOOLS, callArtifactTool } from './artifact-tools.js';

/**
 * An MCP server over an ArtifactStore, so agents and MCP servers can reach stored artifacts as
 * resources: the template `artifact://{id}`, a paginated resources/list, resources/read with the
 * right mimeType (text or blob), subscriptions that report deletions, evictions and expiries (from
 * the store's event stream, when it has one), and the tools artifact_info and artifact_url.
 * Everything is seen through the store, so a session-scoped store shows exactly that session.
 *
 * @example
 * const { server } = createArtifactMcpServer(createHttpArtifactStore({ baseUrl, token }));
 * await server.connect(new StdioServerTransport());
 */
export function createArtifactMcpServer(
  store: ArtifactStore,
  options: ArtifactMcpServerOptions = {},
): ArtifactMcpServer {
  const pageSize = options.pageSize ?? 50;
  const maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  const feedOf =
    options.events ??
    (store.capabilities.events && store.events ? (signal: AbortSignal) => store.events!({ signal }) : undefined);
  const canWatch = feedOf !== undefined;
  const toolOptions = options.budget !== undefined ? { budget: options.budget } : {};
  const looks = store.capabilities.views
    ? ' Look inside one without reading it whole: artifact_search finds lines, artifact_read reads lines (and PDF pages, ZIP entries), artifact_query selects JSON values.'
    : '';
  const server = new Server(
    { name: options.name ?? 'artifact-store', version: options.version ?? '0.1.0' },
    {
      capabilities: { resources: { subscribe: canWatch, listChanged: canWatch }, tools: {} },
      instructions: `Artifacts are files that tools stored instead of putting them in the conversation. List them with artifact_list (or resources/list), read a small one whole with resources/read (artifact://{id}), and give a person a download link with the artifact_url tool.${looks}`,
    },
  );
  const subscribed = new Set<string>();

  server.setRequestHandler(ListResourcesRequestSchema, async (req) => {
    const cursor = req.params?.cursor;
    let page;
    try {
      page = await store.list({ limit: pageSize, ...(cursor ? { cursor } : {}) });
    } catch (err) {
      if (isArtifactError(err) && err.code === 'bad_request')
        throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${err.message}. Start again without a cursor.`);
      throw err;
    }
    return { resources: page.items.map(resourceOf), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: `${ARTIFACT_URI}{id}`,
        name: 'artifact',
        title: 'Stored artifact',
        description: 'A file a tool stored in artifact-store, by its id ({namespace}_{24 hex}).',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, (req) =>
    readArtifactResource(store, req.params.uri, maxReadBytes),
  );

  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    if (!canWatch)
      throw new McpError(
        ErrorCode.MethodNotFound,
        'This artifact store has no event stream, so subscriptions are not offered.',
      );
    const id = idOf(req.params.uri);
    if (!(await store.exists(id))) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${req.params.uri}.`);
    subscribed.add(req.params.uri);
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    subscribed.delete(req.params.uri);
    return {};
  });

  const tools = artifactToolDefinitions(store);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const result = await callArtifactTool(store, req.params.name, req.params.arguments, toolOptions);
    if (result) return result;
    throw new McpError(
      ErrorCode.InvalidParams,
      `Unknown tool ${req.params.name}. This server has ${tools.map((t) => t.name).join(', ')}.`,
    );
  });

  // Deletions, evictions and expiries reach subscribers; a new artifact changes the list.
  const abort = new AbortController();
  let feed: Promise<void> = Promise.resolve();
  if (canWatch) {
    feed = (async () => {
      try {
        for await (const event of feedOf!(abort.signal)) {
          const uri = uriOf(event.ref.id);
          if (event.type === 'artifact.stored') await server.sendResourceListChanged().catch(() => {});
          else {
            if (subscribed.has(uri)) await server.sendResourceUpdated({ uri }).catch(() => {});
            await server.sendResourceListChanged().catch(() => {});
          }
        }
      } catch (err) {
        if (!abort.signal.aborted) options.onError?.(err);
      }
    })();
  }

  return {
    server,
    async close() {
      abort.abort();
      await feed;
    },
  };
}

/** resources/read of `artifact://{id}`: text or base64 up to maxReadBytes; MCP errors otherwise. */
export async function readArtifactResource(
  store: ArtifactStore,
  uri: string,
  maxReadBytes = DEFAULT_MAX_READ_BYTES,
): Promise<ReadResourceResult> {
  const id = idOf(uri);
  const ref = await store.getRef(id);
  if (!ref)
    throw new McpError(
      RESOURCE_NOT_FOUND,
      `Resource not found: ${uri}. It may have expired or been deleted; list what is there with resources/list.`,
    );
  if (ref.sizeBytes > maxReadBytes) {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `${uri} is ${formatBytes(ref.sizeBytes)}, over the ${formatBytes(maxReadBytes)} this server returns inline. Call the artifact_url tool for a download link instead.`,
    );
  }
  const bytes = await store.get(id);
  if (!bytes) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}. It was removed while being read.`);
  const content = isText(ref.mimeType)
    ? { uri, mimeType: ref.mimeType, text: new TextDecoder().decode(bytes) }
    : { uri, mimeType: ref.mimeType, blob: encodeBase64(bytes) };
  return { contents: [content] };
}
