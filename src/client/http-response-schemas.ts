/**
 * The service's JSON answers, checked before the SDK hands them on: each has a schema, and an answer
 * that does not match it is a backend_unavailable ArtifactError naming the field, never a broken ref.
 * A valid answer is returned as sent (its key order, and any field a newer service adds).
 */
import { z } from 'zod';
import type { ArtifactEvent, DownloadLink } from '../core/artifact-store.js';
import type { QueryAnswer, ReadAnswer, SearchAnswer } from '../core/views.js';
import { errors, type ArtifactError } from '../core/errors.js';
import type { ArtifactEventType } from '../core/events.js';
import { ArtifactRefSchema, FetchModeSchema, type ArtifactRef, type ListPage } from '../core/schemas.js';
import type { SessionEndReport } from '../core/sessions.js';
import { isRecord, type RequestLine } from './http-errors.js';

/** An answer's schema and the name the API documents it by (in /openapi.json). */
export interface Answer<T> {
  name: string;
  schema: z.ZodType<T, T>;
}

export const REF_ANSWER: Answer<ArtifactRef> = { name: 'ArtifactRef', schema: ArtifactRefSchema };

export const LIST_ANSWER: Answer<ListPage> = {
  name: 'ArtifactList',
  schema: z.object({ items: z.array(ArtifactRefSchema), nextCursor: z.string().optional() }),
};

export const LINK_ANSWER: Answer<DownloadLink> = {
  name: 'DownloadUrl',
  schema: z.object({
    url: z.string(),
    fetchMode: FetchModeSchema,
    urlExpiresAt: z.string(),
    mimeType: z.string(),
    sizeBytes: z.number().int().nonnegative(),
  }),
};

const count = z.number().int().nonnegative();

/** What every view answer holds; the rest of an answer is passed on as the service sent it. */
const viewHead = {
  id: z.string(),
  mimeType: z.string(),
  sizeBytes: count,
  view: z.enum(['text', 'pdf', 'zip', 'image']),
  text: z.string(),
};

export const READ_ANSWER = {
  name: 'ReadAnswer',
  schema: z.looseObject({
    ...viewHead,
    offset: count,
    lines: z.array(z.string()),
    totalLines: count,
    nextOffset: count.nullable(),
  }),
} as unknown as Answer<ReadAnswer>;

export const SEARCH_ANSWER = {
  name: 'SearchAnswer',
  schema: z.looseObject({
    ...viewHead,
    totalMatches: count,
    returnedMatches: count,
    lines: z.array(z.looseObject({ line: count, text: z.string(), match: z.boolean() })),
    nextOffset: count.nullable(),
  }),
} as unknown as Answer<SearchAnswer>;

export const QUERY_ANSWER = {
  name: 'QueryAnswer',
  schema: z.looseObject({
    ...viewHead,
    path: z.string(),
    totalMatches: count,
    matches: z.array(z.looseObject({ path: z.string() })),
  }),
} as unknown as Answer<QueryAnswer>;

export const SESSION_END_ANSWER: Answer<SessionEndReport> = {
  name: 'SessionEnd',
  schema: z.object({ sessionId: z.string(), refs: count, bytes: count, versions: count }),
};

/**
 * POST /v1/uploads: where to PUT the bytes (one PUT; a service that predates uploads in parts sends
 * no `kind`), or an upload in parts. The fields the SDK uses; `headers` may be left out.
 */
export type UploadTicket =
  | { kind: 'put'; uploadId: string; url: string; headers?: Record<string, string> }
  | { kind: 'multipart'; uploadId: string; sizeBytes: number; partSize: number; partCount: number };

const PUT_TICKET = z.object({
  kind: z.literal('put').default('put'),
  uploadId: z.string().min(1),
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).optional(),
});
const PARTS_TICKET = z.object({
  kind: z.literal('multipart'),
  uploadId: z.string().min(1),
  sizeBytes: z.number().int().nonnegative(),
  partSize: z.number().int().positive(),
  partCount: z.number().int().positive(),
});

export const TICKET_ANSWER: Answer<UploadTicket> = {
  name: 'UploadTicket',
  schema: z.union([PARTS_TICKET, PUT_TICKET]),
} as unknown as Answer<UploadTicket>;

/** GET /v1/uploads/{id}: an upload in flight, and in parts the parts the bucket holds. */
export interface UploadStatus {
  uploadId: string;
  kind: 'put' | 'multipart' | 'tus';
  sizeBytes: number;
  sha256: string;
  partSize?: number;
  partCount?: number;
  parts?: { partNumber: number; sizeBytes: number }[];
}

export const UPLOAD_STATUS_ANSWER: Answer<UploadStatus> = {
  name: 'UploadStatus',
  schema: z.object({
    uploadId: z.string(),
    kind: z.enum(['put', 'multipart', 'tus']),
    sizeBytes: z.number().int().nonnegative(),
    sha256: z.string(),
    partSize: z.number().int().positive().optional(),
    partCount: z.number().int().positive().optional(),
    parts: z.array(z.object({ partNumber: z.number().int(), sizeBytes: z.number().int() })).optional(),
  }),
} as unknown as Answer<UploadStatus>;

/** POST /v1/uploads/{id}/parts: where to PUT each part. */
export const PART_URLS_ANSWER: Answer<{
  parts: { partNumber: number; url: string; headers: Record<string, string> }[];
}> = {
  name: 'PartUrls',
  schema: z.object({
    parts: z.array(
      z.object({ partNumber: z.number().int(), url: z.string().min(1), headers: z.record(z.string(), z.string()) }),
    ),
  }),
};

const EVENT_TYPES = [
  'artifact.stored',
  'artifact.deleted',
  'artifact.evicted',
  'artifact.expired',
] as const satisfies readonly ArtifactEventType[];

const EVENT_ANSWER: Answer<Omit<ArtifactEvent, 'id'>> = {
  name: 'an artifact event',
  schema: z.object({ type: z.enum(EVENT_TYPES), ref: ArtifactRefSchema, at: z.string() }),
};

/** The body of a successful answer, checked against its schema. */
export async function readAnswer<T>(res: Response, answer: Answer<T>, call: RequestLine): Promise<T> {
  let body: unknown;
  try {
    body = await res.json();
  } catch (err) {
    throw unexpectedAnswer(call, answer.name, 'it is not JSON', err);
  }
  checkAnswer(answer, body, call);
  return body;
}

/**
 * One event of GET /v1/events from its id and data; null for events that are not about an artifact
 * (a stream that asked for the audit trail carries others) or of a type this SDK does not know.
 */
export function artifactEventOf(id: string, data: string): ArtifactEvent | null {
  const call = { method: 'GET', path: '/v1/events' };
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch (err) {
    throw unexpectedAnswer(call, EVENT_ANSWER.name, 'an event is not JSON', err);
  }
  if (!isRecord(body) || !body.ref || !(EVENT_TYPES as readonly unknown[]).includes(body.type)) return null;
  checkAnswer(EVENT_ANSWER, body, call);
  return { id, type: body.type, ref: body.ref, at: body.at };
}

function checkAnswer<T>(answer: Answer<T>, body: unknown, call: RequestLine): asserts body is T {
  const checked = answer.schema.safeParse(body);
  if (!checked.success) throw unexpectedAnswer(call, answer.name, describeIssues(checked.error.issues));
}

/** `field items[3].id: Invalid input: expected string, received undefined`, and how many more issues. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const first = issues[0];
  if (!first) return 'it is invalid';
  const path = first.path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
    .replace(/^\./, '');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more ${issues.length === 2 ? 'issue' : 'issues'})` : '';
  return `${path ? `field ${path}` : 'the whole answer'}: ${first.message}${more}`;
}

function unexpectedAnswer(call: RequestLine, name: string, why: string, cause?: unknown): ArtifactError {
  return errors.backendUnavailable(
    `The service's answer to ${call.method} ${call.path} did not match ${name}: ${why}. ` +
      'Is baseUrl pointing at artifact-store?',
    cause === undefined ? {} : { cause },
  );
}
