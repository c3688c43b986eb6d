import { z } from 'zod';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { ArtifactStore } from '../client/artifact-store.js';
import type { ArtifactRef, ArtifactScope } from '../core/schemas.js';
import { didYouMean } from '../core/suggest.js';
import { parseFieldPath } from './paths.js';

const MiB = 1024 * 1024;

/** One base64 field of a tool's JSON output (the per-tool fields layer). */
export const FieldSpecSchema = z.strictObject({
  /** Dot path with `[N]` / `[*]`, relative to the tool's JSON (structuredContent, a JSON text block, or a native result). */
  path: z.string().min(1),
  /** The stored type; default: from magic bytes, else a data: URL's type, else application/octet-stream. */
  mimeType: z.string().min(1).max(255).optional(),
  /** How summaries name it ("PDF", "workbook"); default from the type. */
  contentType: z.string().min(1).max(64).optional(),
  /** Template for the stored filename, e.g. "{name}.pdf". */
  filename: z.string().min(1).max(512).optional(),
  /** Template for the one-line summary; see the placeholders in docs/mcp.md. */
  summary: z.string().min(1).max(1000).optional(),
  /** Sibling fields that must hold these values for the spec to apply (e.g. `{ encoding: "base64" }`). */
  when: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});
export type FieldSpec = z.infer<typeof FieldSpecSchema>;

/** How one tool's typed blocks (image, audio, embedded blob) are named and summarised. */
export const BlockSpecSchema = z.strictObject({
  contentType: z.string().min(1).max(64).optional(),
  filename: z.string().min(1).max(512).optional(),
  summary: z.string().min(1).max(1000).optional(),
});
export type BlockSpec = z.infer<typeof BlockSpecSchema>;

/** A whole, non-negative number: sizes, counts and times in the MCP configs. */
export const count = z.number().int().nonnegative();

/** The limits an image must fit to stay inline for the model. */
const imageLimits = {
  /** Decoded bytes of one inline image. */
  maxBytes: count.min(1),
  /** Pixels on the longer edge (read from the image header). */
  maxEdge: count.min(1),
  /** Images kept inline in one result; the rest become refs. */
  maxPerResult: count,
};

/** One tool's image policy, over the transformer's `images`: what a preset or `tools` entry says. */
export const ToolImagesSchema = z.strictObject({
  inline: z.boolean().optional(),
  maxBytes: imageLimits.maxBytes.optional(),
  maxEdge: imageLimits.maxEdge.optional(),
  maxPerResult: imageLimits.maxPerResult.optional(),
});
export type ToolImages = z.infer<typeof ToolImagesSchema>;

export const ToolSpecSchema = z.strictObject({
  fields: z.array(FieldSpecSchema).optional(),
  blocks: BlockSpecSchema.optional(),
  /** Which of this tool's images stay inline for the model (they are stored and linked as well). */
  images: ToolImagesSchema.optional(),
  /** Apply only when the MCP server's name contains this (case-insensitive); any server when unset. */
  server: z.string().min(1).optional(),
});
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

/**
 * Images the model sees. An image block within these limits stays inline as MCP image content (and
 * is stored too, with a link); a larger one, or one past `maxPerResult`, becomes a ref. The default
 * limits fit what model APIs take without scaling it away or refusing it: Claude takes up to 5 MB
 * per image, scales anything over 1568 px on the long edge down, and refuses more than 2000 px
 * once a request holds over 20 images (an agent loop of screenshots does); 768 KiB of image is
 * 1 MiB of base64, inside the per-result limits hosts put on tool output.
 */
export const ImagePolicySchema = z.strictObject({
  /** true: any tool's images; false: none; "preset": the tools whose preset or `tools` entry says `images.inline`. */
  inline: z.union([z.boolean(), z.literal('preset')]).default('preset'),
  maxBytes: imageLimits.maxBytes.default(768 * 1024),
  maxEdge: imageLimits.maxEdge.default(2000),
  maxPerResult: imageLimits.maxPerResult.default(1),
});
export type ImagePolicyConfig = z.output<typeof ImagePolicySchema>;

/** Subtrees nested deeper than this are replaced by a marker (transformer and guardrail alike). */
export const maxDepthSchema = count.min(1).max(5000).default(1000);

/** Everything about the transformer that is data (validated); functions live in TransformOptions. */
export const TransformConfigSchema = z.strictObject({
  /** Specs for the per-tool fields layer, by tool name; merged after the presets, so they win. */
  tools: z.record(z.string(), z.union([ToolSpecSchema, z.array(ToolSpecSchema)])).default({}),
  /** Which shipped presets apply: "all" (default), "none", or a list of names. */
  presets: z
    .union([z.literal('all'), z.literal('none'), z.array(z.enum(['tableau', 'github', 'playwright', 'mapbox']))])
    .default('all'),
  /** The heuristic layer on or off. */
  heuristics: z.boolean().default(true),
  /** Which image blocks stay inline for the model (see ImagePolicySchema). */
  images: ImagePolicySchema.prefault({}),
  /**
   * The artifact_read / artifact_search / artifact_query tools are there for the model (the gateway,
   * a host that registered them): summaries of stored text, JSON, PDFs and ZIPs say which to use.
   */
  viewTools: z.boolean().default(false),
  /** Strings shorter than this are never probed for base64. */
  minBase64Chars: count.min(8).default(256),
  /** The size net: any string or subtree serialized longer than this becomes an artifact + preview. */
  maxInlineChars: count.min(64).default(10_000),
  /** Embedded text resources (and resources read by the auto-read policy) stay inline below this. */
  inlineTextIfUnderChars: count.default(10_000),
  /** Length of the previews that stand in for stored text and JSON. */
  previewChars: count.min(16).default(500),
  /** Payloads over this are not stored; the observation says so. */
  maxArtifactBytes: count.min(1).default(50 * MiB),
  /** Decoded payloads above this are streamed into the store in chunks instead of decoded whole. */
  streamDecodeAboveBytes: count.min(1).default(8 * MiB),
  /** Resource links: read a resource_link whose declared size is under this many bytes (0 = never). */
  autoReadIfSizeUnderBytes: count.default(0),
  maxDepth: maxDepthSchema,
  /** TTL (seconds) of the references the transformer creates; the store's default when unset. */
  ttlSeconds: z.number().int().positive().optional(),
});
export type TransformConfigInput = z.input<typeof TransformConfigSchema>;
export type TransformConfig = z.output<typeof TransformConfigSchema>;

export interface TransformEvent {
  type: 'artifact.stored';
  ref: ArtifactRef;
  tool: string;
  /** Which layer stored it: custom, fields, links, blocks, heuristic or size. */
  layer: Layer;
}

export type Layer = 'custom' | 'fields' | 'links' | 'blocks' | 'heuristic' | 'size';

/** What a custom transformer gets; puts through `store` are recorded in `artifacts`. */
export interface CustomTransformContext {
  toolName: string;
  namespace: string;
  scope?: Partial<ArtifactScope>;
  /** A store whose puts land in the transform's `artifacts` list and events. */
  store: ArtifactStore;
}

/** Return a value to replace the whole result (and stop), or undefined to let the layers run. */
export type CustomTransformer = (toolName: string, result: unknown, context: CustomTransformContext) => unknown;

export interface TransformOptions {
  /** Where bytes go; without one, a NoOp store (warns once, refs marked not stored). */
  store?: ArtifactStore;
  config?: TransformConfigInput;
  /** The custom transform layer: the escape hatch. */
  transform?: CustomTransformer;
  /** The scope the references are put under (a tenant-wide store's session, for example). */
  scope?: Partial<ArtifactScope>;
  /** The MCP server's name: prefixes the namespace (`tableau.download_workbook`) and picks server-bound specs. */
  serverName?: string;
  /** Override the namespace derived from the tool name. */
  namespace?: string;
  /** Reads a resource_link when the auto-read policy allows (wrapMcpClient passes the client's). */
  readResource?: (uri: string) => Promise<ReadResourceResult>;
  /** artifact.stored, once per artifact, for UIs. */
  onEvent?: (event: TransformEvent) => void;
}

/** Parses a config with its schema; a bad key throws a TypeError that names it and the config. */
export function parseConfig<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = firstIssue(parsed.error.issues);
  const at = issue.path.join('.') || '(root)';
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    throw new TypeError(
      `Invalid ${what} config at ${at}: unknown key ${JSON.stringify(key)}.${didYouMean(key, keysOf(schema))}`,
    );
  }
  throw new TypeError(`Invalid ${what} config at ${at}: ${issue.message}`);
}

/** The innermost issue: a union's own issue says only that no branch matched. */
function firstIssue(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): z.core.$ZodIssue {
  const issue = issues[0]!;
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // The branch that got furthest into the value (the longest path) says the most.
    const best = issue.errors
      .map((branch) => firstIssue(branch, path))
      .sort((a, b) => b.path.length - a.path.length)[0];
    if (best) return best;
  }
  return { ...issue, path };
}

/** Every object key a schema knows, at any depth: where a misspelt key's likely meaning is found. */
function keysOf(schema: z.ZodType, out = new Set<string>()): Set<string> {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  const children: unknown[] = [];
  if (def.shape) {
    for (const [key, value] of Object.entries(def.shape as Record<string, unknown>)) {
      out.add(key);
      children.push(value);
    }
  }
  for (const k of ['innerType', 'element', 'valueType']) if (def[k]) children.push(def[k]);
  if (Array.isArray(def.options)) children.push(...def.options);
  for (const child of children) keysOf(child as z.ZodType, out);
  return out;
}

/** Validates the data part of a config; a bad key fails with a message naming it. */
export function resolveTransformConfig(input: TransformConfigInput = {}): TransformConfig {
  const config = parseConfig(TransformConfigSchema, input, 'transform');
  for (const [tool, specs] of Object.entries(config.tools)) {
    for (const spec of Array.isArray(specs) ? specs : [specs]) {
      for (const field of spec.fields ?? []) {
        try {
          parseFieldPath(field.path);
        } catch (err) {
          throw new TypeError(`Invalid transform config at tools.${tool}: ${(err as Error).message}`);
        }
      }
    }
  }
  return config;
}
