import { errors } from './errors.js';
import { ArtifactScopeSchema, type ArtifactScope } from './schemas.js';

/**
 * The scope of a put: a caller's scope narrowed by the scope it names (X-Artifact-* headers, or
 * `options.scope` in-process). One rule everywhere:
 * - the tenant never changes;
 * - a session or trace the caller is bound to never changes, and a trace-bound caller cannot name a session;
 * - a session-bound caller's user is fixed too; for a tenant-wide caller the user is only a default.
 * Values are checked (1-256 characters).
 */
export function narrowScope(caller: ArtifactScope, asked: Partial<ArtifactScope> = {}): ArtifactScope {
  if (asked.tenantId !== undefined && asked.tenantId !== caller.tenantId) {
    throw errors.forbidden(
      `You are bound to tenant ${JSON.stringify(caller.tenantId)}; you cannot act for tenant ${JSON.stringify(asked.tenantId)}.`,
    );
  }
  const sessionBound = caller.sessionId !== undefined;
  const fixed = (part: 'sessionId' | 'traceId' | 'userId', label: string) => {
    const bound = caller[part];
    const value = asked[part];
    const isBound = part === 'userId' ? sessionBound && bound !== undefined : bound !== undefined;
    if (isBound && value !== undefined && value !== bound) {
      throw errors.forbidden(
        `You are bound to ${label} ${JSON.stringify(bound)}; you cannot act for ${label} ${JSON.stringify(value)}.`,
      );
    }
    return value ?? bound;
  };
  if (asked.sessionId !== undefined && !sessionBound && caller.traceId !== undefined) {
    throw errors.forbidden('You are bound to a trace; you cannot name a session.');
  }
  const candidate: Partial<ArtifactScope> = { tenantId: caller.tenantId };
  const sessionId = fixed('sessionId', 'session');
  const traceId = fixed('traceId', 'trace');
  const userId = fixed('userId', 'user');
  if (sessionId !== undefined) candidate.sessionId = sessionId;
  if (traceId !== undefined) candidate.traceId = traceId;
  if (userId !== undefined) candidate.userId = userId;
  const parsed = ArtifactScopeSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw errors.badRequest(`Invalid scope ${issue.path.join('.')}: ${issue.message} (1-256 characters).`);
  }
  return parsed.data;
}

/** The scope parts a read can be narrowed by (the tenant never changes). */
export interface ReadFilter {
  userId?: string;
  sessionId?: string;
  traceId?: string;
}

const READ_PARTS = [
  ['sessionId', 'session'],
  ['traceId', 'trace'],
  ['userId', 'user'],
] as const;

/**
 * A read or a listing narrowed further by the scope it names: a tenant-wide caller picks the
 * session / trace / user whose reference it means (when several scopes hold the same bytes, each has
 * its own); a bound part may be named again but never changed (403). Values are checked like a put's
 * (1-256 characters).
 */
export function narrowFilter(bound: ReadFilter, asked: ReadFilter): ReadFilter {
  if (asked.sessionId === undefined && asked.traceId === undefined && asked.userId === undefined) return bound;
  const out: ReadFilter = { ...bound };
  for (const [part, label] of READ_PARTS) {
    const value = asked[part];
    if (value === undefined) continue;
    if (value.length < 1 || value.length > 256) {
      throw errors.badRequest(`Invalid ${label} ${JSON.stringify(value)}: use 1-256 characters.`);
    }
    const held = bound[part];
    if (held !== undefined && held !== value) {
      throw errors.forbidden(
        `You are bound to ${label} ${JSON.stringify(held)}; you cannot name ${label} ${JSON.stringify(value)}.`,
      );
    }
    out[part] = value;
  }
  return out;
}

/** What a caller bound to `scope` may read: its tenant, narrowed to its session and trace. */
export function readFilterOf(scope: Partial<ArtifactScope>): { sessionId?: string; traceId?: string } {
  const filter: { sessionId?: string; traceId?: string } = {};
  if (scope.sessionId !== undefined) filter.sessionId = scope.sessionId;
  if (scope.traceId !== undefined) filter.traceId = scope.traceId;
  return filter;
}
