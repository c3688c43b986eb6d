import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { errors } from '../../core/errors.js';
import type { AuditActor } from '../../service/audit.js';
import type { AuditEntry, ServiceOperations } from '../../service/operations.js';
import type { FsckReport } from '../../service/fsck.js';
import type { RetentionReport } from '../../service/retention/index.js';
import { adminTenantOf, requireOperator, requirePerm, type Caller } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactIdParam, errorResponses } from '../openapi-schemas.js';
import type { ArtifactService } from '../../service/artifact-service.js';

/** Who acts, as the audit trail records it. */
export function auditActorOf(caller: Caller, requestId: string): AuditActor {
  return {
    role: caller.role === 'operator' ? 'operator' : 'tenant_admin',
    actorKind: caller.kind,
    actorId: caller.actorId,
    requestId,
  };
}

const Report = z.record(z.string(), z.unknown()).openapi('RetentionReport', {
  description:
    'Counts per category: expired, evicted, over-limit scopes kept (strategy reject or never), unreferenced artifacts, reaped uploads, collected blobs; and what each tenant freed.',
});

const route = createRoute({
  method: 'post',
  path: '/v1/admin/retention',
  tags: ['admin'],
  summary: 'Run retention now (operators)',
  description:
    "Expires references past their TTL, brings sessions and traces over their limits back within them, drops unreferenced artifacts, reaps unfinished direct uploads and collects unheld blobs, for every tenant. The same run as `artifact-store retention run` and the schedule; a call while a run is in progress in this process waits for that run. Operator keys only: a tenant's admin gets 403, since a run works on the whole service (blobs are shared across tenants) and a tenant's limits already hold at every put.",
  responses: {
    200: { description: 'The report of the run', content: { 'application/json': { schema: Report } } },
    ...errorResponses(401, 403, 503),
  },
});

export function registerAdminRetention(
  app: OpenAPIHono<AppEnv>,
  run: ((trigger: string, actor: AuditActor) => Promise<RetentionReport>) | undefined,
) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requireOperator(caller, 'A retention run');
    if (!run)
      throw errors.backendUnavailable('This service runs no retention (no repository behind it).', { retryAfter: 60 });
    return c.json(
      (await run('http', auditActorOf(caller, c.get('requestId')))) as unknown as Record<string, unknown>,
      200,
    );
  });
}

const fsckRoute = createRoute({
  method: 'post',
  path: '/v1/admin/fsck',
  tags: ['admin'],
  summary: 'Cross-check the database and the blob store (operators)',
  description:
    'Rows whose bytes are missing, bytes with no row, and with `verify=true` bytes that no longer hash to their name (reads every blob: slow). Reports only; `artifact-store fsck --repair` on the host fixes what is safely fixable. Operator keys only.',
  request: {
    query: z.object({
      verify: z.enum(['true', 'false']).default('false').openapi({ description: 'Re-hash every blob.' }),
    }),
  },
  responses: {
    200: {
      description: 'The report',
      content: { 'application/json': { schema: z.record(z.string(), z.unknown()).openapi('FsckReport') } },
    },
    ...errorResponses(400, 401, 403, 503),
  },
});

export function registerAdminFsck(
  app: OpenAPIHono<AppEnv>,
  ops: Pick<ServiceOperations, 'recordAction'>,
  check: ((options: { verify: boolean }) => Promise<FsckReport>) | undefined,
) {
  app.openapi(fsckRoute, async (c) => {
    const caller = c.get('caller');
    requireOperator(caller, 'fsck');
    if (!check)
      throw errors.backendUnavailable('This service cannot run fsck here; run `artifact-store fsck` on the host.', {
        retryAfter: 60,
      });
    const verify = c.req.valid('query').verify === 'true';
    const report = await check({ verify });
    await ops.recordAction(auditActorOf(caller, c.get('requestId')), 'fsck.run', {
      details: {
        verify,
        checkedRows: report.checkedRows,
        checkedBlobs: report.checkedBlobs,
        problems: report.problems.length,
        unresolved: report.unresolved,
      },
    });
    return c.json(report as unknown as Record<string, unknown>, 200);
  });
}

const purgeRoute = createRoute({
  method: 'delete',
  path: '/v1/admin/artifacts/{id}',
  tags: ['admin'],
  summary: 'Purge an artifact from a tenant',
  description:
    "Removes every reference of the tenant to the artifact (each with artifact.deleted), and its bytes unless something else still needs them: proxy links stop at once. A tenant's admin purges in its own tenant and is told how many references went, nothing about other tenants. An operator names the tenant (`tenant`) and is also told whether the bytes went (bytesDeleted; cdnInvalidated with a CDN configured). Recorded in the audit trail.",
  request: {
    params: ArtifactIdParam,
    query: z.object({
      tenant: z
        .string()
        .min(1)
        .optional()
        .openapi({ description: 'Operators: the tenant to purge in (required for them).' }),
    }),
  },
  responses: {
    200: {
      description: 'What went',
      content: {
        'application/json': {
          schema: z.object({
            id: z.string(),
            refs: z.number().int(),
            bytesDeleted: z.boolean().optional(),
            cdnInvalidated: z.boolean().optional(),
          }),
        },
      },
    },
    ...errorResponses(400, 401, 403, 404, 503),
  },
});

export function registerAdminPurge(
  app: OpenAPIHono<AppEnv>,
  service: ArtifactService,
  ops: Pick<ServiceOperations, 'recordAction'>,
) {
  app.openapi(purgeRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'admin');
    const { id } = c.req.valid('param');
    const tenantId = adminTenantOf(caller, c.req.valid('query').tenant);
    if (tenantId === undefined) throw errors.badRequest('An operator purges in one tenant: add ?tenant=<tenant id>.');
    const result = await service.purge(tenantId, id);
    await ops.recordAction(auditActorOf(caller, c.get('requestId')), 'artifact.purge', {
      tenantId,
      target: id,
      details: { refs: result.refs },
    });
    // Whether the bytes went says whether another tenant holds the same bytes: operators only.
    return c.json(caller.role === 'operator' ? { id, ...result } : { id, refs: result.refs }, 200);
  });
}

const AuditEntryDoc = z
  .object({
    seq: z.number().int(),
    at: z.string(),
    tenantId: z.string().openapi({ description: "'' for actions on the whole service" }),
    action: z.string(),
    role: z.enum(['tenant_admin', 'operator', 'host', 'scheduler']),
    actorKind: z.string(),
    actorId: z.string(),
    target: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).nullable(),
    requestId: z.string().nullable(),
  })
  .openapi('AuditEntry');

const auditRoute = createRoute({
  method: 'get',
  path: '/v1/admin/audit',
  tags: ['admin'],
  summary: 'The audit trail: admin and operator actions, newest first',
  description:
    "Purges, retention runs, fsck runs, API keys created and revoked, policy changes: who, when, what, on which tenant, and the request id. A tenant's admin sees its own tenant's entries; an operator sees all (or `tenant`; `tenant=` empty is not allowed, the service-wide entries are those with tenantId '').",
  request: {
    query: z.object({
      tenant: z.string().min(1).optional().openapi({ description: 'Operators: one tenant only.' }),
      action: z.string().min(1).max(64).optional().openapi({ description: 'One action only, e.g. artifact.purge.' }),
      since: z.iso.datetime({ offset: true }).optional().openapi({ description: 'At or after this time (ISO 8601).' }),
      limit: z.coerce.number().int().min(1).max(1000).default(100),
      cursor: z
        .string()
        .regex(/^\d{1,15}$/, 'a cursor from a previous page')
        .optional(),
    }),
  },
  responses: {
    200: {
      description: 'A page of entries',
      content: {
        'application/json': {
          schema: z.object({ entries: z.array(AuditEntryDoc), nextCursor: z.string().optional() }),
        },
      },
    },
    ...errorResponses(400, 401, 403),
  },
});

export function registerAdminAudit(app: OpenAPIHono<AppEnv>, ops: Pick<ServiceOperations, 'listAudit'>) {
  app.openapi(auditRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'admin');
    if (caller.role !== 'operator' && caller.sessionId !== undefined)
      throw errors.forbidden("The audit trail is for a tenant's admins: use a tenant-wide token (no session claim).");
    const q = c.req.valid('query');
    const tenantId = adminTenantOf(caller, q.tenant);
    const rows = await ops.listAudit({
      ...(tenantId !== undefined ? { tenantId } : {}),
      ...(q.action !== undefined ? { action: q.action } : {}),
      ...(q.since !== undefined ? { since: Date.parse(q.since) } : {}),
      ...(q.cursor !== undefined ? { beforeSeq: Number(q.cursor) } : {}),
      limit: q.limit,
    });
    const entries = rows.map(auditEntryJson);
    return c.json({ entries, ...(rows.length === q.limit ? { nextCursor: String(rows.at(-1)!.seq) } : {}) }, 200);
  });
}

/** An audit entry on the wire: its time as ISO 8601. */
export function auditEntryJson(e: AuditEntry): Omit<AuditEntry, 'at'> & { at: string } {
  return { ...e, at: new Date(e.at).toISOString() };
}
