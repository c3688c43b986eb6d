/**
 * The tools a model uses on stored artifacts, with their handlers: artifact_read, artifact_search,
 * artifact_query and artifact_list (what is inside, and what is there), artifact_info and
 * artifact_url (what one is, and a link for a person). The artifact MCP server and the gateway serve
 * them; a host that registers tools itself takes them from `artifactTools(store)`. Their names and
 * arguments are a contract other clients (the Python client's tools) keep too.
 *
 * The handlers call the store; the service renders what the model reads (`text` of each view
 * answer), so every client shows the same answer within the same budget.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ArtifactStore } from '../client/artifact-store.js';
import { formatBytes } from '../core/bytes.js';
import { isArtifactError } from '../core/errors.js';
import { LIST_SORTS, type ListSort } from '../core/schemas.js';
import { modelRef } from './summary.js';

/** A tool as tools/list shows it: name, description, JSON Schema of its arguments. */
export interface ArtifactToolDefinition {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, object>; required?: string[] };
}

/** A tool and its handler, for hosts that register tools themselves. */
export interface ArtifactTool extends ArtifactToolDefinition {
  /** Runs the tool: what the model reads, or `isError` with what to do. Never throws for bad input. */
  call(args: Record<string, unknown> | undefined): Promise<CallToolResult>;
}

export interface ArtifactToolOptions {
  /** Characters a read, search or query answer may take (the host's observation budget). Default: the service's. */
  budget?: number;
}

const ID = { type: 'string', description: 'The artifact id, e.g. github.get_file_contents_3f1c…' };
const whole = (description: string, minimum = 1) => ({ type: 'integer', minimum, description });

/** The tools that look inside an artifact; a store without views does not offer them. */
export const VIEW_TOOL_NAMES = ['artifact_read', 'artifact_search', 'artifact_query'] as const;

/** Every tool's definition, in the order tools/list shows them. */
export const ARTIFACT_TOOLS: ArtifactToolDefinition[] = [
  {
    name: 'artifact_read',
    description:
      'Read a stored artifact by lines, numbered like cat -n, within your budget: text, logs, JSON, XML, CSV, source code; a PDF page by page (page); a ZIP archive lists its entries, and entry reads one of them. For an image it gives the type and pixel size. The answer says which lines it holds, how many there are, and the exact call that continues.',
    inputSchema: {
      type: 'object',
      properties: {
        id: ID,
        offset: whole('First line to read, 1-based (default 1)'),
        limit: whole('Lines to read at most (default: as many as fit)'),
        page: whole('PDF: the page to read (default 1)'),
        entry: { type: 'string', description: 'ZIP: the path of the entry to read (default: the list of entries)' },
        column: whole('Goes on inside a line too long for one answer: the character to start at (the answer gives it)'),
      },
      required: ['id'],
    },
  },
  {
    name: 'artifact_search',
    description:
      'Find the lines of a stored artifact that contain a text, or match a regular expression, like grep -n: each with its line number (and page, for a PDF), with context lines if asked. Counts every match in the whole artifact and says how to get the next ones. Search first when an artifact is large.',
    inputSchema: {
      type: 'object',
      properties: {
        id: ID,
        pattern: {
          type: 'string',
          description: 'The text to find (or a JavaScript regular expression with regex: true)',
        },
        regex: {
          type: 'boolean',
          description:
            'pattern is a regular expression (no backreferences, lookahead, or lookbehind with a capture group). Default false',
        },
        ignoreCase: { type: 'boolean', description: 'Match upper and lower case alike. Default false' },
        context: whole('Lines to show before and after each match (0-20, default 0)', 0),
        maxMatches: whole('Matching lines to return at most (1-500, default 20)'),
        offset: whole('Search from this line on (the answer gives it for the next matches)'),
        page: whole('PDF: the page to search from (default 1)'),
        entry: { type: 'string', description: 'ZIP: search inside this entry' },
      },
      required: ['id', 'pattern'],
    },
  },
  {
    name: 'artifact_query',
    description:
      "Select values from a stored JSON artifact with an RFC 9535 JSONPath, e.g. $.items[0].title, $..id, $.issues[?@.state == 'open'].number, $.rows[0:10]. Each value comes with its normalized path; large values are cut and say what was left out.",
    inputSchema: {
      type: 'object',
      properties: {
        id: ID,
        path: { type: 'string', description: 'The JSONPath, starting at $' },
        entry: { type: 'string', description: 'ZIP: query this JSON entry' },
      },
      required: ['id', 'path'],
    },
  },
  {
    name: 'artifact_list',
    description:
      'List the artifacts stored in your scope, newest first (or as sort says), optionally only those whose id, filename or name holds q: id, type, size, filename and the tool that produced each.',
    inputSchema: {
      type: 'object',
      properties: {
        mimePrefix: { type: 'string', description: 'Only these types, e.g. image/ or application/pdf' },
        q: { type: 'string', description: 'Only artifacts whose id, filename or name holds this text' },
        sort: {
          type: 'string',
          enum: [...LIST_SORTS],
          description: 'Order: newest (default), oldest, largest, smallest, or name',
        },
        limit: whole('Artifacts per page (1-100, default 20)'),
        cursor: { type: 'string', description: 'nextCursor of the previous page' },
      },
    },
  },
  {
    name: 'artifact_info',
    description:
      'Describe one stored artifact by id: type, size, sha256, filename, where it came from and when it expires.',
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string', description: 'The artifact id, e.g. tableau.download_workbook_3f1c…' } },
      required: ['id'],
    },
  },
  {
    name: 'artifact_url',
    description:
      'A signed download URL for one artifact, for a person or a browser to fetch without a token. It expires (default 1 hour).',
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'The artifact id' },
        mode: {
          type: 'string',
          enum: ['proxy', 'direct'],
          description: 'proxy: through the service; direct: from S3 or the CDN when configured',
        },
        expiresIn: { type: 'integer', minimum: 1, maximum: 604800, description: 'Seconds the URL stays valid' },
      },
      required: ['id'],
    },
  },
];

const Id = z.string().min(1);
const Whole = (min = 1) => z.number().int().min(min);
const ARGS = {
  artifact_read: z.strictObject({
    id: Id,
    offset: Whole().optional(),
    limit: Whole().optional(),
    page: Whole().optional(),
    entry: z.string().optional(),
    column: Whole().optional(),
  }),
  artifact_search: z.strictObject({
    id: Id,
    pattern: z.string(),
    regex: z.boolean().optional(),
    ignoreCase: z.boolean().optional(),
    context: Whole(0).max(20).optional(),
    maxMatches: Whole().max(500).optional(),
    offset: Whole().optional(),
    page: Whole().optional(),
    entry: z.string().optional(),
  }),
  artifact_query: z.strictObject({ id: Id, path: z.string().min(1), entry: z.string().optional() }),
  artifact_list: z.strictObject({
    mimePrefix: z.string().optional(),
    q: z.string().optional(),
    sort: z.enum(LIST_SORTS).optional(),
    limit: Whole().max(100).optional(),
    cursor: z.string().optional(),
  }),
  artifact_info: z.object({ id: Id }),
  artifact_url: z.object({
    id: Id,
    mode: z.enum(['proxy', 'direct']).optional(),
    expiresIn: z
      .number()
      .int()
      .positive()
      .max(7 * 24 * 3600)
      .optional(),
  }),
};
type ToolName = keyof typeof ARGS;

const fail = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });
const ok = (text: string, structuredContent?: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text }],
  ...(structuredContent ? { structuredContent } : {}),
});

/** What the store offers of the six tools. */
export function artifactToolDefinitions(store: ArtifactStore): ArtifactToolDefinition[] {
  return ARTIFACT_TOOLS.filter((t) => offers(store, t.name as ToolName));
}

function offers(store: ArtifactStore, name: ToolName): boolean {
  if ((VIEW_TOOL_NAMES as readonly string[]).includes(name)) return store.capabilities.views === true;
  return true;
}

/**
 * The tools over a store, ready to register: each with its definition and handler.
 *
 * @example
 * for (const tool of artifactTools(store, { budget: 20_000 })) host.register(tool.name, tool.inputSchema, tool.call);
 */
export function artifactTools(store: ArtifactStore, options: ArtifactToolOptions = {}): ArtifactTool[] {
  return artifactToolDefinitions(store).map((t) => ({
    ...t,
    call: async (args) => (await callArtifactTool(store, t.name, args, options))!,
  }));
}

/** One of the six tools over a store; undefined for any other name. */
export async function callArtifactTool(
  store: ArtifactStore,
  name: string,
  input: Record<string, unknown> | undefined,
  options: ArtifactToolOptions = {},
): Promise<CallToolResult | undefined> {
  if (!Object.hasOwn(ARGS, name)) return undefined;
  const tool = name as ToolName;
  if (!offers(store, tool))
    return fail(`${name} is not available: this artifact store has no views (it is not the service).`);
  const parsed = ARGS[tool].safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    const schema = ARTIFACT_TOOLS.find((t) => t.name === name)!.inputSchema;
    return fail(
      `${name} got bad arguments (${where}${issue?.message}). It takes ${JSON.stringify(Object.keys(schema.properties))}${schema.required ? `, of which ${schema.required.join(' and ')} required` : ''}.`,
    );
  }
  const args = parsed.data as Record<string, unknown> & { id: string };
  const { id, ...rest } = args;
  const budget = options.budget !== undefined ? { budget: options.budget } : {};
  try {
    switch (tool) {
      case 'artifact_read':
        return ok((await store.read!(id, { ...rest, ...budget })).text);
      case 'artifact_search':
        return ok((await store.search!(id, { ...(rest as { pattern: string }), ...budget })).text);
      case 'artifact_query':
        return ok((await store.query!(id, { ...(rest as { path: string }), ...budget })).text);
      case 'artifact_list':
        return ok(await listText(store, args as z.infer<(typeof ARGS)['artifact_list']>));
      case 'artifact_info':
        return await info(store, args.id);
      case 'artifact_url':
        return await link(store, args as z.infer<(typeof ARGS)['artifact_url']>);
    }
  } catch (err) {
    // Tool failures belong in the result, where the model can read them.
    if (isArtifactError(err)) {
      if (err.code === 'not_found')
        return fail(
          `No artifact ${args.id} here. It may have expired or been deleted; artifact_list shows what is there.`,
        );
      return fail(`${name} failed (${err.code}): ${err.message}`);
    }
    throw err;
  }
}

async function listText(
  store: ArtifactStore,
  a: { mimePrefix?: string; q?: string; sort?: ListSort; limit?: number; cursor?: string },
) {
  const page = await store.list({
    limit: a.limit ?? 20,
    ...(a.mimePrefix ? { mimePrefix: a.mimePrefix } : {}),
    ...(a.q ? { q: a.q } : {}),
    ...(a.sort ? { sort: a.sort } : {}),
    ...(a.cursor ? { cursor: a.cursor } : {}),
  });
  return JSON.stringify({
    artifacts: page.items.map(modelRef),
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  });
}

async function info(store: ArtifactStore, id: string): Promise<CallToolResult> {
  const ref = await store.getRef(id);
  if (!ref)
    return fail(`No artifact ${id} here. It may have expired or been deleted; artifact_list shows what is there.`);
  return ok(
    JSON.stringify({
      ...modelRef(ref),
      uri: `artifact://${ref.id}`,
      createdAt: ref.createdAt,
      expiresAt: ref.expiresAt ?? null,
    }),
    { artifact: ref },
  );
}

async function link(
  store: ArtifactStore,
  a: { id: string; mode?: 'proxy' | 'direct'; expiresIn?: number },
): Promise<CallToolResult> {
  if (!store.url || !store.capabilities.signedUrls)
    return fail('This artifact store cannot sign download URLs (it has no public URL configured).');
  try {
    const l = await store.url(a.id, {
      ...(a.mode ? { mode: a.mode } : {}),
      ...(a.expiresIn ? { expiresIn: a.expiresIn } : {}),
    });
    return ok(
      `Download link for ${a.id} (${formatBytes(l.sizeBytes)} ${l.mimeType}), valid until ${l.urlExpiresAt}: ${l.url}`,
      {
        ...l,
      },
    );
  } catch (err) {
    if (isArtifactError(err) && err.code !== 'not_found') return fail(`No download link for ${a.id}: ${err.message}`);
    throw err;
  }
}
