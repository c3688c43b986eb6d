import { sha256Hex } from '../core/hash.js';
import type { ArtifactRepository, AuditEntry, AuditRole } from '../db/repository.js';

/** Who acts: the role, the kind of credential and its id, and the request it came in. */
export interface AuditActor {
  role: AuditRole;
  actorKind: string;
  actorId: string;
  requestId?: string | null;
}

/** How long audit entries are kept by default (ARTIFACT_STORE_AUDIT_RETENTION_DAYS). */
export const AUDIT_KEPT_DAYS = 90;

/** A run the service started by itself: the in-process schedule or a Workers cron trigger. */
export function scheduledActor(trigger: string): AuditActor {
  return { role: 'scheduler', actorKind: 'scheduler', actorId: trigger };
}

/**
 * Records one admin or operator action, with its `audit.recorded` event (streamed to operators, and
 * to the tenant's admins when it names a tenant).
 */
export function recordAction(
  repo: Pick<ArtifactRepository, 'recordAudit'>,
  actor: AuditActor,
  action: string,
  what: { tenantId?: string; target?: string; details?: Record<string, unknown> } = {},
  at = Date.now(),
): Promise<AuditEntry> {
  return repo.recordAudit({
    at,
    tenantId: what.tenantId ?? '',
    action,
    role: actor.role,
    actorKind: actor.actorKind,
    actorId: actor.actorId,
    target: what.target ?? null,
    details: what.details ?? null,
    requestId: actor.requestId ?? null,
  });
}

/**
 * Tenant policies come from configuration, so a change shows when a process starts with other
 * ones than the last recorded. Records `policy.change` for the service (base and overrides, with a
 * digest) and one for each tenant whose overrides changed (which its admins see); nothing when the
 * policies are the same as last recorded. Returns the entries written.
 */
export async function recordPolicyChange(
  repo: Pick<ArtifactRepository, 'recordAudit' | 'listAudit'>,
  actor: AuditActor,
  policies: { base: object; tenants: Record<string, object> },
  at = Date.now(),
): Promise<AuditEntry[]> {
  const tenants = Object.fromEntries(Object.entries(policies.tenants).map(([t, p]) => [t, sortKeys(p)]));
  const digest = await sha256Hex(
    new TextEncoder().encode(JSON.stringify({ base: sortKeys(policies.base), tenants: sortKeys(tenants) })),
  );
  const [last] = await repo.listAudit({ action: 'policy.change', tenantId: '', limit: 1 });
  if (last?.details?.digest === digest) return [];
  const before = (last?.details?.tenants ?? {}) as Record<string, object>;
  const written = [
    await recordAction(repo, actor, 'policy.change', { details: { digest, base: policies.base, tenants } }, at),
  ];
  for (const t of new Set([...Object.keys(before), ...Object.keys(tenants)])) {
    if (JSON.stringify(before[t] ?? null) === JSON.stringify(tenants[t] ?? null)) continue;
    written.push(
      await recordAction(repo, actor, 'policy.change', { tenantId: t, details: { overrides: tenants[t] ?? null } }, at),
    );
  }
  return written;
}

function sortKeys(o: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
