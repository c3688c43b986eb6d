import { z } from 'zod';
import { ARTIFACT_ID_PATTERN, NAMESPACE_PATTERN, SHA256_PATTERN } from './ids.js';

const scopePart = z.string().min(1).max(256);

/** Who holds a reference: the tenant always, and optionally the user / session / trace inside it. */
export const ArtifactScopeSchema = z.object({
  tenantId: scopePart,
  userId: scopePart.optional(),
  sessionId: scopePart.optional(),
  traceId: scopePart.optional(),
});
export type ArtifactScope = z.infer<typeof ArtifactScopeSchema>;

export const FetchModeSchema = z.enum(['direct', 'proxy']);
export type FetchMode = z.infer<typeof FetchModeSchema>;

/** What the LLM sees instead of the bytes. */
export const ArtifactRefSchema = z.object({
  id: z.string().regex(ARTIFACT_ID_PATTERN),
  mimeType: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  filename: z.string().optional(),
  sha256: z.string().regex(SHA256_PATTERN),
  namespace: z.string().regex(NAMESPACE_PATTERN),
  scope: ArtifactScopeSchema,
  source: z.record(z.string(), z.unknown()).optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
  createdAt: z.string(),
  lastAccessedAt: z.string().optional(),
  expiresAt: z.string().optional(),
  url: z.string().optional(),
  fetchMode: FetchModeSchema.optional(),
  urlExpiresAt: z.string().optional(),
  /** A named version's name (in the app that is its namespace) and number. */
  name: z.string().optional(),
  version: z.number().int().nonnegative().optional(),
});
export type ArtifactRef = z.infer<typeof ArtifactRefSchema>;

/** A name in a listing: how many live versions it has, the latest one's number, when it was saved. */
export const NameInfoSchema = z.object({
  name: z.string(),
  /** 'user': user-wide (no session); 'session': in the listed session. */
  scope: z.enum(['session', 'user']),
  latestVersion: z.number().int().nonnegative(),
  versions: z.number().int().positive(),
  updatedAt: z.string(),
});
export type NameInfo = z.infer<typeof NameInfoSchema>;

/** Where a name lives: tenant, app (its versions' artifact namespace), user, and a session or '' (user-wide). */
export interface NameScope {
  tenantId: string;
  app: string;
  userId: string;
  sessionId: string;
}

export interface NameKey extends NameScope {
  name: string;
}

export interface NamePage {
  items: NameInfo[];
  nextCursor?: string;
}

/** Free-form JSON the putter attaches; kept per reference, never shown to another scope. */
export const MetaSchema = z.record(z.string(), z.unknown());

/** Options of every put, over HTTP and in-process alike. */
export const PutOptionsSchema = z.object({
  mimeType: z.string().min(1).max(255).optional(),
  filename: z.string().max(1024).optional(),
  namespace: z.string().regex(NAMESPACE_PATTERN).optional(),
  scope: ArtifactScopeSchema.partial().optional(),
  meta: MetaSchema.optional(),
  /** Where the bytes came from (tool name, server, ...); shown to the model in the ref. */
  source: MetaSchema.optional(),
  /**
   * Seconds until this reference expires, or `'never'` where the operator allows references that
   * never expire (ARTIFACT_STORE_ALLOW_NO_EXPIRY).
   */
  ttl: z.union([z.number().int().positive(), z.literal('never')]).optional(),
  /** The expected lowercase hex sha256; the put fails with checksum_mismatch when the bytes differ. */
  sha256: z.string().regex(SHA256_PATTERN).optional(),
});
export type PutOptions = z.infer<typeof PutOptionsSchema>;

/**
 * The orders of a listing: `newest` (the default) and `oldest` by creation time, `largest` and
 * `smallest` by size, `name` by filename (the id where there is none) A→Z in byte order. Ties go by
 * creation time, then by reference, in the sort's direction (`name`: oldest first).
 */
export const LIST_SORTS = ['newest', 'oldest', 'largest', 'smallest', 'name'] as const;
export type ListSort = (typeof LIST_SORTS)[number];
/** The longest search text a listing takes (characters). */
export const MAX_LIST_SEARCH = 200;

/** Filters of a listing. Times are ISO 8601. */
export const ListQuerySchema = z.object({
  sessionId: scopePart.optional(),
  traceId: scopePart.optional(),
  userId: scopePart.optional(),
  namespace: z.string().regex(NAMESPACE_PATTERN).optional(),
  mimePrefix: z.string().min(1).max(255).optional(),
  createdAfter: z.iso.datetime({ offset: true }).optional(),
  createdBefore: z.iso.datetime({ offset: true }).optional(),
  /**
   * A substring of the filename, the id or (for a named version) the name; ASCII letters match
   * either case, `%`, `_` and `\` match themselves.
   */
  q: z
    .string()
    .min(1, `send 1-${MAX_LIST_SEARCH} characters to search for, or leave q out`)
    .max(MAX_LIST_SEARCH, `send 1-${MAX_LIST_SEARCH} characters to search for, or leave q out`)
    .optional(),
  sort: z.enum(LIST_SORTS, { error: `use one of ${LIST_SORTS.join(', ')}` }).optional(),
  /** A page's nextCursor (it holds the last item's sort key: a filename takes up to ~1 KiB). */
  cursor: z.string().max(2048).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
});
export type ListQuery = z.infer<typeof ListQuerySchema>;

export interface ListPage {
  items: ArtifactRef[];
  nextCursor?: string;
}

/** A byte range, both ends inclusive, as in HTTP. */
export interface ByteRange {
  start: number;
  end: number;
}
