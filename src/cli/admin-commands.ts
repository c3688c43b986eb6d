/** The ops commands about who may do what and what is used: keys, usage, audit. They act on this host's data. */
import { parseArgs } from 'node:util';
import { formatBytes } from '../core/bytes.js';
import { policiesOf } from '../core/config.js';
import { PERMS, type Perm } from '../core/perms.js';
import { usageReport, type UsageReport } from '../service/usage.js';
import { issueApiKey } from '../service/api-keys.js';
import { recordAction } from '../service/audit.js';
import type { AuditEntry } from '../db/repository.js';
import { CliError, EXIT } from './cli-error.js';
import { hostActor } from './host.js';
import { openServiceDb } from './data-dir.js';

export async function keys(argv: string[]) {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      perms: { type: 'string' },
      label: { type: 'string' },
      operator: { type: 'boolean' },
      'data-dir': { type: 'string' },
    },
  });
  const { repo } = await openServiceDb(values['data-dir']);
  try {
    if (action === 'create' && values.operator) {
      if (values.tenant !== undefined || values.perms !== undefined)
        throw new CliError(
          'An operator key belongs to no tenant and has every power: drop --tenant and --perms. See artifact-store keys --help.',
          EXIT.usage,
        );
      const { id, key } = await issueApiKey(repo, { operator: true, label: values.label });
      await recordAction(repo, hostActor(), 'key.create', {
        target: id,
        details: { operator: true, label: values.label ?? null },
      });
      process.stdout.write(
        `Created operator key ${id} (all tenants' usage and events, retention runs, fsck, the audit trail; no artifacts). It is shown once:\n${key}\n`,
      );
    } else if (action === 'create') {
      if (!values.tenant)
        throw new CliError('keys create needs --tenant T (or --operator). See artifact-store keys --help.', EXIT.usage);
      const perms = (values.perms ?? 'read,write').split(',').map((p) => p.trim());
      const bad = perms.filter((p) => !(PERMS as readonly string[]).includes(p));
      if (bad.length)
        throw new CliError(
          `Unknown perms ${bad.join(', ')}; use ${PERMS.join(', ')} (an operator key: --operator).`,
          EXIT.usage,
        );
      const { id, key } = await issueApiKey(repo, {
        tenantId: values.tenant,
        perms: perms as Perm[],
        label: values.label,
      });
      await recordAction(repo, hostActor(), 'key.create', {
        tenantId: values.tenant,
        target: id,
        details: { perms, label: values.label ?? null },
      });
      process.stdout.write(
        `Created API key ${id} for tenant ${values.tenant} (${perms.join(', ')}). It is shown once:\n${key}\n`,
      );
    } else if (action === 'ls') {
      for (const k of await repo.listApiKeys(values.tenant)) {
        process.stdout.write(
          `${k.id}\t${k.operator ? '(operator)' : k.tenantId}\t${k.perms.join(',')}\t${k.revokedAt ? 'revoked' : 'active'}\t${k.label ?? ''}\n`,
        );
      }
    } else if (action === 'revoke') {
      const id = positionals[0];
      if (!id) throw new CliError('keys revoke needs a key id (artifact-store keys ls lists them).', EXIT.usage);
      const record = await repo.findApiKey(id);
      const ok = await repo.revokeApiKey(id, Date.now());
      if (ok)
        await recordAction(repo, hostActor(), 'key.revoke', {
          tenantId: record?.tenantId ?? '',
          target: id,
          ...(record?.operator ? { details: { operator: true } } : {}),
        });
      process.stdout.write(ok ? `Revoked ${id}\n` : `No active key ${id}\n`);
      if (!ok) process.exitCode = 1;
    } else {
      throw new CliError(
        `keys needs create, ls or revoke${action ? ` (not ${JSON.stringify(action)})` : ''}. See artifact-store keys --help.`,
        EXIT.usage,
      );
    }
  } finally {
    await repo.close();
  }
}

export async function usage(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      tenant: { type: 'string' },
      top: { type: 'string' },
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const top = values.top === undefined ? 20 : Number(values.top);
  if (!Number.isInteger(top) || top < 1 || top > 1000)
    throw new CliError('--top must be a whole number from 1 to 1000.', EXIT.usage);
  const { repo, config } = await openServiceDb(values['data-dir']);
  try {
    const report = await usageReport(
      repo,
      policiesOf(config),
      values.tenant !== undefined ? { tenantId: values.tenant } : {},
      top,
      Date.now(),
      { retention: values.tenant !== undefined ? 'tenant' : 'service' },
    );
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : formatUsage(report));
  } finally {
    await repo.close();
  }
}

const pct = (used: number, limit: number) => `${Math.round((100 * used) / limit)}%`;

function formatUsage(r: UsageReport): string {
  const table = (title: string, head: string[], rows: string[][]) => {
    if (rows.length === 0) return `${title}: none\n`;
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]) =>
      `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`;
    return `${title}:\n${[line(head), ...rows.map(line)].join('\n')}\n`;
  };
  return [
    `usage at ${r.at} (live references only)`,
    table(
      'tenants',
      ['tenant', 'bytes', 'artifacts', 'of quota'],
      r.tenants.map((t) => [
        t.tenantId,
        formatBytes(t.bytes),
        String(t.count),
        t.limitBytes ? pct(t.bytes, t.limitBytes) : '—',
      ]),
    ),
    table(
      'top sessions',
      ['tenant / session', 'bytes', 'of limit', 'artifacts', 'of limit'],
      r.sessions.map((u) => [
        `${u.tenantId} / ${u.sessionId}`,
        formatBytes(u.bytes),
        pct(u.bytes, u.limitBytes),
        String(u.count),
        pct(u.count, u.limitCount),
      ]),
    ),
    table(
      'top traces',
      ['tenant / trace', 'bytes', 'of limit', 'artifacts', 'of limit'],
      r.traces.map((u) => [
        `${u.tenantId} / ${u.traceId}`,
        formatBytes(u.bytes),
        pct(u.bytes, u.limitBytes),
        String(u.count),
        pct(u.count, u.limitCount),
      ]),
    ),
  ].join('\n');
}

const DURATION = /^(\d+)([smhd])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export async function auditCommand(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      tenant: { type: 'string' },
      action: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new CliError('--limit must be a whole number from 1 to 10000.', EXIT.usage);
  let since: number | undefined;
  if (values.since !== undefined) {
    const m = DURATION.exec(values.since);
    since = m ? Date.now() - Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : Date.parse(values.since);
    if (!Number.isFinite(since))
      throw new CliError(
        `--since ${JSON.stringify(values.since)} is neither a duration (30m, 12h, 7d) nor a date (2026-11-01T00:00:00Z).`,
        EXIT.usage,
      );
  }
  const { repo } = await openServiceDb(values['data-dir']);
  try {
    const entries = await repo.listAudit({
      ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
      ...(values.action !== undefined ? { action: values.action } : {}),
      ...(since !== undefined ? { since } : {}),
      limit,
    });
    if (values.json) {
      for (const e of entries) process.stdout.write(`${JSON.stringify({ ...e, at: new Date(e.at).toISOString() })}\n`);
    } else {
      process.stdout.write(formatAudit(entries));
    }
  } finally {
    await repo.close();
  }
}

function formatAudit(entries: AuditEntry[]): string {
  if (entries.length === 0) return 'no audit entries\n';
  return `${entries
    .map((e) => {
      const details = e.details ? ` ${JSON.stringify(e.details)}` : '';
      return `${new Date(e.at).toISOString()}  ${e.action.padEnd(14)}  ${(e.tenantId || '(service)').padEnd(12)}  ${e.role}:${e.actorKind}:${e.actorId}${e.target ? `  ${e.target}` : ''}${e.requestId ? `  req ${e.requestId}` : ''}${details}`;
    })
    .join('\n')}\n`;
}
