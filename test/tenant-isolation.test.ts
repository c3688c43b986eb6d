/**
 * Tenant isolation under a seeded random workload. Three tenants, three sessions each, and four
 * kinds of credential (session-bound token, tenant-wide token, tenant admin, operator key) drive
 * every route in process: artifacts (put, get, HEAD, meta, list, delete, links and the signed
 * downloads they point at), direct uploads, ending sessions, usage, admin, events (SSE), /mcp (resources and tools),
 * the MCP gateway (/mcp/gateway and /v1/mcp/servers, with one gateway server per tenant group) and
 * the calls the /ui page makes. At least 10,000 requests per run.
 *
 * Every string a tenant stores carries its tenant's marker word (payloads, filenames, sessions,
 * traces, users, namespaces, metadata, the tenant id itself), and every artifact id and sha256 is
 * known to belong to one tenant. No response to a tenant's credential (body or header, also after
 * decoding base64 and percent-encoding) may carry another tenant's marker, id or hash unless the
 * request itself named it (an echo of the caller's own input). JSON answers are also checked by
 * structure: every tenantId / sessionId / traceId / userId in them is the caller's, and usage
 * figures match what the operator sees for the caller's tenant alone. The operator key may see
 * everything, and must be refused (403) on /v1/artifacts*, /v1/uploads*, /v1/sessions*, /v1/mcp*, /mcp and
 * /mcp/gateway.
 *
 * The workload is random and seeded: each run picks a new seed and names it in the test title;
 * ISOLATION_SEED=<seed> replays a run (ISOLATION_VERBOSE=1 prints requests per route and status).
 * A route added to the service joins the workload here, with the data it must keep to its tenant.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_PATH } from '../src/http/routes/mcp-gateway.js';
import { parseGatewayConfig } from '../src/mcp/gateway/config.js';
import { createMcpGateway, type McpGateway } from '../src/mcp/gateway/gateway.js';
import { nodeUpstreamConnector } from '../src/node/gateway.js';
import { bearer, createTestApp, sha256, type TestApp } from './helpers/app.js';
import { ROOT } from './helpers/cli-server.js';

const SEED = process.env.ISOLATION_SEED
  ? Number(process.env.ISOLATION_SEED)
  : (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
if (!Number.isSafeInteger(SEED))
  throw new Error(`ISOLATION_SEED must be a whole number, not ${JSON.stringify(process.env.ISOLATION_SEED)}.`);
const VERBOSE = Boolean(process.env.ISOLATION_VERBOSE);
const TARGET_REQUESTS = 10_000;
/** How long an SSE body is read before it is cancelled. */
const SSE_BUDGET_MS = 30;

// ---------------------------------------------------------------------------------------------
// Tenants and their marked names

/** Marker words: none is a substring of another, and each appears only as its own word. */
const WORDS = ['alpha', 'bravo', 'charlie'] as const;
const TENANTS = [0, 1, 2] as const;
const tenantId = (t: number) => `tnt-${WORDS[t]}`;
const sessionOf = (t: number, s: number) => `${WORDS[t]}-sess-${s + 1}`;
const traceOf = (t: number, k: number) => `${WORDS[t]}-trace-${k + 1}`;
const userOf = (t: number, k: number) => `${WORDS[t]}-user-${k + 1}`;
/** A session and a trace name every tenant uses: filters and usage rows must still stay within one tenant. */
const COMMON_SESSION = 'common-sess';
const COMMON_TRACE = 'common-trace';
const sessionName = (t: number, s: number) => (s === 3 ? COMMON_SESSION : sessionOf(t, s));
const traceName = (t: number, k: number) => (k === 3 ? COMMON_TRACE : traceOf(t, k));
const namespaceOf = (t: number, k: number) => ['art', `${WORDS[t]}.tool`, 'shared.ns'][k % 3]!;
const MIMES = ['text/plain', 'application/json', 'application/octet-stream', 'image/png'] as const;
const NEVER_ID = `art_${'0f'.repeat(12)}`;
/** `path` with `query` (a=b) added, whether or not it has a query already. */
/** The gateway server each tenant may use: alpha and bravo share one, charlie has its own. */
const GATEWAY_SERVER_OF = ['shared', 'shared', 'solo'] as const;
const gatewayConfig = () =>
  parseGatewayConfig({
    mcpServers: Object.fromEntries(
      (['shared', 'solo'] as const).map((name) => [
        name,
        {
          command: process.execPath,
          args: ['--import', 'tsx', 'test/helpers/scripted-mcp-server.ts'],
          cwd: ROOT,
          env: { SCRIPTED_NAME: name },
          artifacts: { tenants: TENANTS.filter((t) => GATEWAY_SERVER_OF[t] === name).map(tenantId) },
        },
      ]),
    ),
  });
let gateway: McpGateway;
const withQuery = (path: string, query: string) => (query ? `${path}${path.includes('?') ? '&' : '?'}${query}` : path);

type Kind = 'session' | 'tenant' | 'admin' | 'operator';

interface Cred {
  kind: Kind;
  /** -1 for the operator. */
  tenant: number;
  /** The session a session-bound token is bound to. */
  session?: number;
  token: string;
  label: string;
}

// ---------------------------------------------------------------------------------------------
// The leak detector

/** Whom each artifact id (its 24-hex part) and sha256 belongs to: a tenant, or several ('shared'). */
type Owners = Map<string, number | 'shared'>;

const WORD_PATTERNS = WORDS.map((w) => new RegExp(`(?<![A-Za-z])${w}(?![A-Za-z])`, 'g'));
const TOKEN_CHAR = /[A-Za-z0-9._-]/;
const HEX_RUN = /(?<![0-9a-f])[0-9a-f]{24,}(?![0-9a-f])/g;
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;

/** The text and every decoded form of it worth scanning: percent-decoded, and base64 runs decoded. */
function decodedForms(text: string): string[] {
  const forms = [text];
  if (text.includes('%')) {
    forms.push(
      text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (m) => {
        try {
          return decodeURIComponent(m);
        } catch {
          return m;
        }
      }),
    );
  }
  const decoded: string[] = [];
  for (const m of text.matchAll(BASE64_RUN)) decoded.push(Buffer.from(m[0], 'base64').toString('latin1'));
  if (decoded.length > 0) forms.push(decoded.join('\n'));
  return forms;
}

/** The whole name around a marker: `payload-of-bravo-12-x`, `tnt-bravo`, `bravo.tool_0a1b…`. */
function tokenAround(text: string, start: number, end: number): string {
  let a = start;
  let b = end;
  while (a > 0 && TOKEN_CHAR.test(text[a - 1]!)) a--;
  while (b < text.length && TOKEN_CHAR.test(text[b]!)) b++;
  return text.slice(a, b).replace(/^[._-]+|[._-]+$/g, '');
}

/**
 * What in `response` belongs to a tenant other than `viewer`: marked names, and ids or hashes of
 * another tenant's bytes. Anything the request itself carried (`request`) is an echo, not a leak.
 */
function findLeaks(response: string, viewer: number, request: string, owners: Owners): string[] {
  const found = new Set<string>();
  for (const text of decodedForms(response)) {
    for (const t of TENANTS) {
      if (t === viewer || !text.includes(WORDS[t])) continue;
      for (const m of text.matchAll(WORD_PATTERNS[t]!)) {
        const token = tokenAround(text, m.index, m.index + m[0].length);
        if (!request.includes(token)) found.add(`${tenantId(t)} name ${JSON.stringify(token)}`);
      }
    }
    for (const m of text.matchAll(HEX_RUN)) {
      const owner = owners.get(m[0].slice(0, 24));
      if (owner === undefined || owner === 'shared' || owner === viewer) continue;
      if (!request.includes(m[0])) found.add(`${tenantId(owner)} id/hash ${m[0]}`);
    }
  }
  return [...found];
}

/**
 * Scope fields in a JSON answer that are not the viewer's: every tenantId is its tenant, every
 * session / trace / user is one of its tenant's, and a session-bound token sees only its session.
 * `echoed`: values the request itself named that its answer repeats (the session a DELETE
 * /v1/sessions/{id} names, whoever's it is), not data of anyone.
 */
function foreignScopeFields(
  value: unknown,
  viewer: { tenant: number; session?: number },
  echoed: readonly string[] = [],
): string[] {
  const out: string[] = [];
  const own = tenantId(viewer.tenant);
  const prefix = `${WORDS[viewer.tenant]}-`;
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, `${path}[${i}]`);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      const at = `${path}.${k}`;
      if (typeof x === 'string' && echoed.includes(x)) continue;
      if ((k === 'tenantId' || k === 'tenant') && typeof x === 'string' && x !== own)
        out.push(`${at} = ${JSON.stringify(x)}`);
      if (
        (k === 'sessionId' || k === 'traceId' || k === 'userId') &&
        typeof x === 'string' &&
        !x.startsWith(prefix) &&
        x !== COMMON_SESSION &&
        x !== COMMON_TRACE
      )
        out.push(`${at} = ${JSON.stringify(x)}`);
      if (
        k === 'sessionId' &&
        typeof x === 'string' &&
        viewer.session !== undefined &&
        x !== sessionOf(viewer.tenant, viewer.session)
      )
        out.push(`${at} = ${JSON.stringify(x)} (another session)`);
      walk(x, at);
    }
  };
  walk(value, '$');
  return out;
}

// ---------------------------------------------------------------------------------------------
// The workload's commands: abstract choices, resolved against what exists when they run

type Who = { kind: Kind; tenant: number; session: number };
type Target = { from: 'own' | 'foreign' | 'shared' | 'never'; pick: number };
type TenantParam = 'none' | 'own' | 'foreign';
/** The scope a read names (X-Artifact-* header or query parameter): whose name, for which part. */
type Narrow = {
  part: 'none' | 'session' | 'trace' | 'user';
  whose: 'own' | 'other' | 'foreign' | 'common';
  header: boolean;
};
type Cmd =
  | {
      op: 'put';
      who: Who;
      session: number | null;
      trace: number | null;
      user: number | null;
      shared: boolean;
      repeat: boolean;
      pick: number;
      salt: string;
      pad: number;
      ns: number;
      mime: number;
      filename: boolean;
      meta: boolean;
      link: boolean;
      wrongSession: boolean;
      ttl: boolean;
    }
  | { op: 'get'; who: Who; target: Target; range: number; conditional: boolean; disposition: number; narrow: Narrow }
  | { op: 'head'; who: Who; target: Target; narrow: Narrow }
  | { op: 'view'; who: Who; target: Target; view: 'text' | 'search' | 'query'; narrow: Narrow }
  | { op: 'meta'; who: Who; target: Target; link: boolean; narrow: Narrow }
  | {
      op: 'list';
      who: Who;
      session: 'none' | 'own' | 'other' | 'foreign' | 'common';
      trace: boolean;
      ns: number | null;
      mime: boolean;
      limit: number;
      pages: number;
      link: boolean;
      header: boolean;
    }
  | { op: 'delete'; who: Who; target: Target; narrow: Narrow }
  | { op: 'url'; who: Who; target: Target; body: number; tamper: number; narrow: Narrow }
  | { op: 'upload'; who: Who; complete: boolean }
  | { op: 'usage'; who: Who; tenant: TenantParam; top: number }
  | { op: 'admin'; who: Who; action: 'retention' | 'fsck' | 'purge' | 'audit'; tenant: TenantParam; target: Target }
  | {
      op: 'events';
      who: Who;
      filter: 'none' | 'session' | 'foreignSession' | 'common' | 'trace' | 'ownTenant' | 'foreignTenant';
      resume: 'none' | 'zero' | 'recent';
      back: number;
      liveFor: number;
      audit: boolean;
    }
  | {
      op: 'mcp';
      who: Who;
      action:
        | 'list'
        | 'read'
        | 'templates'
        | 'tools'
        | 'info'
        | 'look'
        | 'url'
        | 'subscribe'
        | 'listen'
        | 'close'
        | 'hijack'
        | 'badTool';
      target: Target;
      liveFor: number;
    }
  | {
      op: 'names';
      who: Who;
      action: 'save' | 'read' | 'foreign' | 'list' | 'versions' | 'delete';
      pick: number;
    }
  | { op: 'sessions'; who: Who; whose: 'own' | 'other' | 'foreign' | 'common'; user: boolean }
  | {
      op: 'gateway';
      who: Who;
      action: 'servers' | 'resources' | 'read' | 'foreign' | 'tools' | 'echo' | 'chart' | 'hijack';
    }
  | {
      op: 'ui';
      who: Who;
      allSessions: boolean;
      mode: 'proxy' | 'direct';
      disposition: 'inline' | 'attachment';
      pick: number;
      liveFor: number;
    };

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
const kindArb = (session: number, tenant: number, admin: number, operator: number): fc.Arbitrary<Kind> =>
  fc.oneof(
    w(session, fc.constant('session' as const)),
    w(tenant, fc.constant('tenant' as const)),
    w(admin, fc.constant('admin' as const)),
    w(operator, fc.constant('operator' as const)),
  );
const whoArb = (kinds: fc.Arbitrary<Kind>) =>
  fc.record({ kind: kinds, tenant: fc.nat({ max: 2 }), session: fc.nat({ max: 2 }) });
const artifactWho = whoArb(kindArb(5, 3, 2, 1));
const serviceWho = whoArb(kindArb(3, 3, 3, 3));
const targetArb: fc.Arbitrary<Target> = fc.record({
  from: fc.oneof(
    w(7, fc.constant('own' as const)),
    w(4, fc.constant('foreign' as const)),
    w(1, fc.constant('shared' as const)),
    w(1, fc.constant('never' as const)),
  ),
  pick: fc.nat(),
});
const tenantParamArb: fc.Arbitrary<TenantParam> = fc.constantFrom('none', 'own', 'foreign');
const narrowArb: fc.Arbitrary<Narrow> = fc.record({
  part: fc.oneof(
    w(4, fc.constant('none' as const)),
    w(2, fc.constant('session' as const)),
    w(1, fc.constant('trace' as const)),
    w(1, fc.constant('user' as const)),
  ),
  whose: fc.constantFrom('own' as const, 'other' as const, 'foreign' as const, 'common' as const),
  header: fc.boolean(),
});
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  w(
    30,
    fc.record({
      op: fc.constant('put' as const),
      who: artifactWho,
      session: maybe(fc.nat({ max: 3 })),
      trace: maybe(fc.nat({ max: 3 })),
      user: maybe(fc.nat({ max: 1 })),
      shared: fc.nat({ max: 11 }).map((n) => n === 0),
      repeat: fc.boolean(),
      pick: fc.nat(),
      salt: fc.string({ unit: fc.constantFrom(...'abcdefghijkmnopqrstuvwxyz0123456789'), minLength: 6, maxLength: 6 }),
      pad: fc.nat({ max: 3000 }),
      ns: fc.nat({ max: 2 }),
      mime: fc.nat({ max: MIMES.length - 1 }),
      filename: fc.boolean(),
      meta: fc.boolean(),
      link: fc.boolean(),
      wrongSession: fc.nat({ max: 19 }).map((n) => n === 0),
      ttl: fc.boolean(),
    }),
  ),
  w(
    12,
    fc.record({
      op: fc.constant('get' as const),
      who: artifactWho,
      target: targetArb,
      range: fc.nat({ max: 4 }),
      conditional: fc.boolean(),
      disposition: fc.nat({ max: 2 }),
      narrow: narrowArb,
    }),
  ),
  w(5, fc.record({ op: fc.constant('head' as const), who: artifactWho, target: targetArb, narrow: narrowArb })),
  w(
    6,
    fc.record({
      op: fc.constant('view' as const),
      who: artifactWho,
      target: targetArb,
      view: fc.constantFrom('text' as const, 'search' as const, 'query' as const),
      narrow: narrowArb,
    }),
  ),
  w(
    7,
    fc.record({
      op: fc.constant('meta' as const),
      who: artifactWho,
      target: targetArb,
      link: fc.boolean(),
      narrow: narrowArb,
    }),
  ),
  w(
    9,
    fc.record({
      op: fc.constant('list' as const),
      who: artifactWho,
      session: fc.constantFrom(
        'none' as const,
        'own' as const,
        'other' as const,
        'foreign' as const,
        'common' as const,
      ),
      trace: fc.boolean(),
      ns: maybe(fc.nat({ max: 2 })),
      mime: fc.boolean(),
      limit: fc.integer({ min: 1, max: 200 }),
      pages: fc.integer({ min: 1, max: 3 }),
      link: fc.boolean(),
      header: fc.boolean(),
    }),
  ),
  w(3, fc.record({ op: fc.constant('delete' as const), who: artifactWho, target: targetArb, narrow: narrowArb })),
  w(
    7,
    fc.record({
      op: fc.constant('url' as const),
      who: artifactWho,
      target: targetArb,
      body: fc.nat({ max: 2 }),
      tamper: fc.nat({ max: 3 }),
      narrow: narrowArb,
    }),
  ),
  w(2, fc.record({ op: fc.constant('upload' as const), who: artifactWho, complete: fc.boolean() })),
  w(
    5,
    fc.record({
      op: fc.constant('usage' as const),
      who: serviceWho,
      tenant: tenantParamArb,
      top: fc.integer({ min: 1, max: 300 }),
    }),
  ),
  w(
    4,
    fc.record({
      op: fc.constant('admin' as const),
      who: serviceWho,
      action: fc.oneof(
        w(1, fc.constant('retention' as const)),
        w(1, fc.constant('fsck' as const)),
        w(2, fc.constant('purge' as const)),
        w(4, fc.constant('audit' as const)),
      ),
      tenant: tenantParamArb,
      target: targetArb,
    }),
  ),
  w(
    2,
    fc.record({
      op: fc.constant('events' as const),
      who: serviceWho,
      filter: fc.constantFrom(
        'none' as const,
        'session' as const,
        'foreignSession' as const,
        'common' as const,
        'trace' as const,
        'ownTenant' as const,
        'foreignTenant' as const,
      ),
      resume: fc.constantFrom('none' as const, 'zero' as const, 'recent' as const),
      back: fc.nat({ max: 400 }),
      liveFor: fc.nat({ max: 12 }),
      audit: fc.nat({ max: 2 }).map((n) => n === 0),
    }),
  ),
  w(
    5,
    fc.record({
      op: fc.constant('mcp' as const),
      who: artifactWho,
      action: fc.oneof(
        w(4, fc.constant('list' as const)),
        w(4, fc.constant('read' as const)),
        w(1, fc.constant('templates' as const)),
        w(1, fc.constant('tools' as const)),
        w(3, fc.constant('info' as const)),
        w(3, fc.constant('look' as const)),
        w(3, fc.constant('url' as const)),
        w(1, fc.constant('subscribe' as const)),
        w(1, fc.constant('listen' as const)),
        w(1, fc.constant('close' as const)),
        w(1, fc.constant('hijack' as const)),
        w(1, fc.constant('badTool' as const)),
      ),
      target: targetArb,
      liveFor: fc.nat({ max: 8 }),
    }),
  ),
  w(
    4,
    fc.record({
      op: fc.constant('names' as const),
      who: artifactWho,
      action: fc.oneof(
        w(4, fc.constant('save' as const)),
        w(3, fc.constant('read' as const)),
        w(2, fc.constant('foreign' as const)),
        w(1, fc.constant('list' as const)),
        w(1, fc.constant('versions' as const)),
        w(1, fc.constant('delete' as const)),
      ),
      pick: fc.nat(),
    }),
  ),
  w(
    1,
    fc.record({
      op: fc.constant('sessions' as const),
      who: artifactWho,
      whose: fc.constantFrom('own' as const, 'other' as const, 'foreign' as const, 'common' as const),
      user: fc.nat({ max: 3 }).map((n) => n === 0),
    }),
  ),
  w(
    3,
    fc.record({
      op: fc.constant('gateway' as const),
      who: artifactWho,
      action: fc.oneof(
        w(1, fc.constant('servers' as const)),
        w(1, fc.constant('resources' as const)),
        w(2, fc.constant('read' as const)),
        w(1, fc.constant('foreign' as const)),
        w(1, fc.constant('tools' as const)),
        w(2, fc.constant('echo' as const)),
        w(1, fc.constant('chart' as const)),
        w(1, fc.constant('hijack' as const)),
      ),
    }),
  ),
  w(
    1,
    fc.record({
      op: fc.constant('ui' as const),
      who: artifactWho,
      allSessions: fc.boolean(),
      mode: fc.constantFrom('proxy' as const, 'direct' as const),
      disposition: fc.constantFrom('inline' as const, 'attachment' as const),
      pick: fc.nat(),
      liveFor: fc.nat({ max: 8 }),
    }),
  ),
);

// ---------------------------------------------------------------------------------------------
// Running the workload

interface Answer {
  /** The request as the detector saw it: method, path, headers, body. */
  request: string;
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** A streamed answer (SSE) read later, after some other commands ran. */
interface OpenStream {
  kind: string;
  cred: Cred;
  request: string;
  res: Response;
  remaining: number;
  onText?: (text: string) => void;
}

class IsolationBreach extends Error {}

const ARTIFACT_ROUTES = /^\/(v1\/(artifacts|uploads|mcp|names|sessions)(\/|\?|$)|mcp(\/gateway)?(\?|$))/;

class Workload {
  readonly stats = new Map<string, Map<number, number>>();
  /** Answers that carried data, per kind: the checks above only mean something when there was some. */
  readonly seen = new Map<string, number>();
  /** Milliseconds spent per route kind, request and checks together. */
  readonly elapsed = new Map<string, number>();
  total = 0;
  private readonly owners: Owners = new Map();
  /** Ids each tenant stored, and per session. */
  private readonly ids: string[][] = [[], [], []];
  private readonly idsBySession: string[][][] = [0, 1, 2].map(() => [[], [], []]);
  private readonly sharedIds: string[] = [];
  /** Every id each tenant ever stored: any other id must be invisible to it (404). */
  private readonly heldEver: Set<string>[] = [new Set(), new Set(), new Set()];
  /** Payloads each tenant stored (to put again), and the shared ones. */
  private readonly payloads: string[][] = [[], [], []];
  private readonly sharedPayloads: string[] = [];
  private counter = 0;
  private lastPosition = 0;
  private readonly streams: OpenStream[] = [];
  private readonly mcpSessions = new Map<string, { id: string; tenant: number; cred: Cred; listening: boolean }>();
  private rpcId = 1;
  private creds!: { session: Cred[][]; tenant: Cred[]; admin: Cred[]; operator: Cred };
  /** What the operator saw, for the detector's own check at the end. */
  operatorSamples: string[] = [];

  constructor(private readonly t: TestApp) {}

  async setup() {
    const session = TENANTS.map((t) =>
      [0, 1, 2].map((s) => ({
        kind: 'session' as const,
        tenant: t,
        session: s,
        label: `session:${sessionOf(t, s)}`,
        token: '',
      })),
    );
    for (const row of session)
      for (const c of row)
        c.token = await this.t.token({
          tenant: tenantId(c.tenant),
          sub: userOf(c.tenant, c.session! % 2),
          session: sessionOf(c.tenant, c.session!),
          perms: ['read', 'write'],
        });
    const tenant: Cred[] = [];
    const admin: Cred[] = [];
    for (const t of TENANTS) {
      tenant.push({
        kind: 'tenant',
        tenant: t,
        label: `tenant:${tenantId(t)}`,
        token: await this.t.token({ tenant: tenantId(t), sub: `${WORDS[t]}-agent`, perms: ['read', 'write'] }),
      });
      admin.push({
        kind: 'admin',
        tenant: t,
        label: `admin:${tenantId(t)}`,
        token: await this.t.token({ tenant: tenantId(t), sub: `${WORDS[t]}-admin`, perms: ['read', 'write', 'admin'] }),
      });
    }
    const operator: Cred = { kind: 'operator', tenant: -1, label: 'operator', token: await this.t.operatorKey() };
    this.creds = { session, tenant, admin, operator };
  }

  private cred(who: Who): Cred {
    if (who.kind === 'operator') return this.creds.operator;
    if (who.kind === 'session') return this.creds.session[who.tenant]![who.session]!;
    return this.creds[who.kind][who.tenant]!;
  }

  private saw(what: string, n = 1) {
    this.seen.set(what, (this.seen.get(what) ?? 0) + n);
  }

  private count(kind: string, status: number) {
    const byStatus = this.stats.get(kind) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.stats.set(kind, byStatus);
    this.total++;
  }

  /** Fails the run with what leaked, to whom, through which request. */
  private breach(what: string, kind: string, cred: Cred, request: string, status: number, body: string): never {
    const shown = request.replace(/Bearer [^"\s]+/g, 'Bearer <token>');
    throw new IsolationBreach(
      `${what}\n  route: ${kind}\n  credential: ${cred.label}\n  request: ${shown.slice(0, 600)}\n  status: ${status}\n  response: ${body.slice(0, 1500)}`,
    );
  }

  /** Everything the viewer got, checked against everything other tenants hold. */
  private inspect(
    kind: string,
    cred: Cred,
    request: string,
    status: number,
    headers: Headers,
    body: string,
    json: unknown,
    echoed: readonly string[] = [],
  ) {
    if (status >= 500) this.breach(`a ${status} answer (the service failed)`, kind, cred, request, status, body);
    if (cred.kind === 'operator') {
      const path = request.slice(request.indexOf(' ') + 1).split('\n')[0]!;
      if (ARTIFACT_ROUTES.test(path) && status !== 403)
        this.breach(
          `the operator key got ${status} on an artifact route (want 403)`,
          kind,
          cred,
          request,
          status,
          body,
        );
      return;
    }
    const headerText = [...headers].map(([k, v]) => `${k}: ${v}`).join('\n');
    const leaks = findLeaks(`${headerText}\n\n${body}`, cred.tenant, request, this.owners);
    if (leaks.length > 0)
      this.breach(
        `another tenant's data in a response: ${leaks.join('; ')}`,
        kind,
        cred,
        request,
        status,
        `${headerText}\n\n${body}`,
      );
    if (json !== undefined) {
      const fields = foreignScopeFields(
        json,
        { tenant: cred.tenant, ...(cred.kind === 'session' ? { session: cred.session! } : {}) },
        echoed,
      );
      if (fields.length > 0)
        this.breach(
          `scope fields of another tenant or session: ${fields.join('; ')}`,
          kind,
          cred,
          request,
          status,
          body,
        );
    }
  }

  /** One request through app.request, counted and inspected. `auth: false` for signed links. */
  async send(
    kind: string,
    cred: Cred,
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: string; auth?: boolean; echoed?: string[] } = {},
  ): Promise<Answer> {
    const started = performance.now();
    const headers = { ...(init.auth === false ? {} : bearer(cred.token)), ...init.headers };
    const res = await this.t.app.request(path, {
      method,
      headers,
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const text = method === 'HEAD' ? '' : await res.text();
    const json = jsonOf(res, text);
    const request = `${method} ${path}\n${JSON.stringify(headers)}\n${init.body ?? ''}`;
    this.count(kind, res.status);
    this.inspect(kind, cred, request, res.status, res.headers, text, json, init.echoed);
    if (cred.kind === 'operator' && (kind.startsWith('usage') || kind.startsWith('admin') || kind === 'events'))
      this.operatorSamples.push(text);
    this.elapsed.set(kind, (this.elapsed.get(kind) ?? 0) + performance.now() - started);
    if (cred.kind !== 'operator' && res.status < 300) {
      if (Array.isArray(json?.items) && json.items.length > 0) this.saw(`${kind} with items`);
      if (Array.isArray(json?.entries) && json.entries.length > 0) this.saw(`${kind} with entries`);
      if (Array.isArray(json?.sessions) && json.sessions.length > 0) this.saw(`${kind} with session rows`);
      if (kind.includes('download') || kind.includes('preview') || kind === 'artifacts.get')
        if (/payload-of-|shared-payload-/.test(text)) this.saw(`${kind} with bytes`);
    }
    return { request, status: res.status, headers: res.headers, text, json };
  }

  private expectStatus(a: Answer, want: number[], why: string, kind: string, cred: Cred) {
    if (!want.includes(a.status))
      this.breach(`${why}: got ${a.status}, want ${want.join(' or ')}`, kind, cred, a.request, a.status, a.text);
  }

  /** The 404 body of an id never stored, per route, with the id taken out. */
  private readonly missingShapes = new Map<string, string>();

  /**
   * An id the caller's tenant never held answers exactly like one never stored: 404, and the same
   * body once the id is taken out (nothing tells another tenant's artifact from no artifact).
   */
  private async expectMissing(a: Answer, id: string, kind: string, cred: Cred, again: (id: string) => Promise<Answer>) {
    this.expectStatus(a, [404], "an id the caller's tenant never held", kind, cred);
    const shape = (x: Answer, which: string) => x.text.split(which).join('<id>');
    let missing = this.missingShapes.get(kind);
    if (missing === undefined) {
      const never = await again(NEVER_ID);
      this.expectStatus(never, [404], 'an id never stored', kind, cred);
      missing = shape(never, NEVER_ID);
      this.missingShapes.set(kind, missing);
    }
    if (shape(a, id) !== missing)
      this.breach(
        `another tenant's id answers unlike a missing one: ${JSON.stringify(missing)}`,
        kind,
        cred,
        a.request,
        a.status,
        a.text,
      );
  }

  // --- picking targets

  /**
   * An id to ask about. `foreign`: the caller's tenant never held it (another tenant's, a shared
   * payload only others stored, or one never stored), so it must answer exactly as missing.
   */
  private target(cred: Cred, target: Target): { id: string; foreign: boolean } {
    const pickFrom = (pool: string[]) => (pool.length > 0 ? pool[target.pick % pool.length]! : undefined);
    const own = Math.max(cred.tenant, 0);
    const answer = (id: string) => ({ id, foreign: cred.tenant >= 0 && !this.heldEver[cred.tenant]!.has(id) });
    if (target.from === 'own') {
      const pool = cred.kind === 'session' ? this.idsBySession[own]![cred.session!]! : this.ids[own]!;
      const id = pickFrom(pool) ?? pickFrom(this.ids[own]!);
      if (id) return answer(id);
    }
    if (target.from === 'foreign' || target.from === 'own') {
      const others = TENANTS.filter((t) => t !== own);
      const pool = this.ids[others[target.pick % 2]!]!.filter((id) => !this.sharedIds.includes(id));
      const id = pickFrom(pool);
      if (id) return answer(id);
    }
    if (target.from === 'shared') {
      const id = pickFrom(this.sharedIds);
      if (id) return answer(id);
    }
    return answer(NEVER_ID);
  }

  private remember(t: number, session: number | null, ref: { id: string; sha256: string }, shared: boolean) {
    const hex = ref.id.slice(-24);
    if (shared) {
      this.owners.set(hex, 'shared');
      if (!this.sharedIds.includes(ref.id)) this.sharedIds.push(ref.id);
    } else {
      const before = this.owners.get(hex);
      if (before !== undefined && before !== t)
        throw new Error(
          `id ${ref.id} of ${tenantId(t)} was already ${String(before)}'s: payloads are meant to be unique per tenant`,
        );
      this.owners.set(hex, t);
    }
    this.heldEver[t]!.add(ref.id);
    if (!this.ids[t]!.includes(ref.id)) this.ids[t]!.push(ref.id);
    if (session !== null && session < 3 && !this.idsBySession[t]![session]!.includes(ref.id))
      this.idsBySession[t]![session]!.push(ref.id);
  }

  /**
   * The scope a read names, and what it must then answer whatever the id: a bound token naming
   * another session is refused (403); a name of another tenant's scope finds nothing (404).
   */
  private narrowing(cred: Cred, n: Narrow): { headers: Record<string, string>; query: string; want?: number } {
    if (n.part === 'none' || cred.tenant < 0) return { headers: {}, query: '' };
    const t = cred.tenant;
    const own = cred.session ?? 0;
    const names = {
      session: [sessionOf(t, own), sessionOf(t, (own + 1) % 3), sessionOf((t + 1) % 3, own), COMMON_SESSION],
      trace: [traceOf(t, own), traceOf(t, (own + 1) % 3), traceOf((t + 1) % 3, own), COMMON_TRACE],
      user: [userOf(t, 0), userOf(t, 1), userOf((t + 1) % 3, 0), userOf(t, 1)],
    }[n.part];
    const name = names[['own', 'other', 'foreign', 'common'].indexOf(n.whose)]!;
    const label = `${n.part[0]!.toUpperCase()}${n.part.slice(1)}`;
    const named = n.header
      ? { headers: { [`X-Artifact-${label}`]: name }, query: '' }
      : { headers: {}, query: `${n.part}=${encodeURIComponent(name)}` };
    if (cred.kind === 'session' && n.part === 'session' && name !== sessionOf(t, own)) return { ...named, want: 403 };
    if (n.whose === 'foreign') return { ...named, want: 404 };
    return named;
  }

  /** A narrowed read: the id's own checks, unless the naming decides the answer by itself. */
  private async narrowedRead(
    kind: string,
    cred: Cred,
    narrowed: { want?: number },
    target: { id: string; foreign: boolean },
    send: (id: string) => Promise<Answer>,
  ): Promise<Answer> {
    const a = await send(target.id);
    if (narrowed.want === 403 && a.status === 403) this.saw('narrowed reads refused (another session)');
    if (narrowed.want === undefined && a.status === 200 && /[?&](session|trace|user)=|X-Artifact-/.test(a.request))
      this.saw('narrowed reads answered');
    if (narrowed.want === 403)
      this.expectStatus(a, [403], 'a bound token naming another session on a read', kind, cred);
    else if (target.foreign) await this.expectMissing(a, target.id, kind, cred, send);
    else if (narrowed.want === 404)
      this.expectStatus(a, [404], "a read narrowed to another tenant's scope", kind, cred);
    return a;
  }

  // --- commands

  async run(cmd: Cmd) {
    switch (cmd.op) {
      case 'put':
        return this.put(cmd);
      case 'get':
        return this.get(cmd);
      case 'head': {
        const cred = this.cred(cmd.who);
        const { id, foreign } = this.target(cred, cmd.target);
        const n = this.narrowing(cred, cmd.narrow);
        const head = (x: string) =>
          this.send('artifacts.head', cred, 'HEAD', withQuery(`/v1/artifacts/${x}`, n.query), { headers: n.headers });
        const a = await this.narrowedRead('artifacts.head', cred, n, { id, foreign }, head);
        if (foreign && n.want !== 403) {
          const missing = await head(NEVER_ID);
          const shown = (x: Answer) =>
            JSON.stringify([...x.headers].filter(([k]) => k !== 'x-request-id' && k !== 'content-length'));
          if (shown(a) !== shown(missing))
            this.breach(
              `HEAD of another tenant's id answers unlike a missing one: ${shown(missing)}`,
              'artifacts.head',
              cred,
              a.request,
              a.status,
              shown(a),
            );
        }
        return;
      }
      case 'meta': {
        const cred = this.cred(cmd.who);
        const target = this.target(cred, cmd.target);
        const n = this.narrowing(cred, cmd.narrow);
        const meta = (x: string) =>
          this.send(
            'artifacts.meta',
            cred,
            'GET',
            withQuery(`/v1/artifacts/${x}/meta${cmd.link ? '?url=proxy' : ''}`, n.query),
            { headers: n.headers },
          );
        const a = await this.narrowedRead('artifacts.meta', cred, n, target, meta);
        if (a.status === 200 && a.json?.url) await this.download('download', cred, a.json.url as string, {});
        return;
      }
      case 'view': {
        // What a model reads (lines, matches, JSONPath values): the same scope rules as a download.
        const cred = this.cred(cmd.who);
        const target = this.target(cred, cmd.target);
        const n = this.narrowing(cred, cmd.narrow);
        const asked = { text: 'text?limit=5', search: 'search?pattern=payload&context=1', query: 'query?path=%24' }[
          cmd.view
        ];
        const kind = `artifacts.${cmd.view}`;
        const view = (x: string) =>
          this.send(kind, cred, 'GET', withQuery(`/v1/artifacts/${x}/${asked}`, n.query), { headers: n.headers });
        await this.narrowedRead(kind, cred, n, target, view);
        return;
      }
      case 'list':
        return this.list(cmd);
      case 'delete': {
        const cred = this.cred(cmd.who);
        const n = this.narrowing(cred, cmd.narrow);
        const del = (x: string) =>
          this.send('artifacts.delete', cred, 'DELETE', withQuery(`/v1/artifacts/${x}`, n.query), {
            headers: n.headers,
          });
        await this.narrowedRead('artifacts.delete', cred, n, this.target(cred, cmd.target), del);
        return;
      }
      case 'url':
        return this.url(cmd);
      case 'upload': {
        const cred = this.cred(cmd.who);
        if (cmd.complete) {
          await this.send('uploads.complete', cred, 'POST', `/v1/uploads/up_${'0123456789abcdef'.repeat(2)}/complete`);
          return;
        }
        const bytes = `payload-of-${WORDS[Math.max(cred.tenant, 0)]}-upload-${this.counter++}`;
        const a = await this.send('uploads.begin', cred, 'POST', '/v1/uploads', {
          headers: {
            'Content-Type': 'application/json',
            ...(cred.kind !== 'session' && cred.tenant >= 0
              ? { 'X-Artifact-Session': sessionOf(cred.tenant, this.counter % 3) }
              : {}),
          },
          body: JSON.stringify({
            sizeBytes: bytes.length,
            sha256: sha256(bytes),
            mimeType: 'text/plain',
            filename: `${WORDS[Math.max(cred.tenant, 0)]}-file-upload.txt`,
          }),
        });
        if (cred.kind !== 'operator')
          this.expectStatus(a, [400], 'direct uploads on the fs driver', 'uploads.begin', cred);
        return;
      }
      case 'usage':
        return this.usage(cmd);
      case 'admin':
        return this.admin(cmd);
      case 'events':
        return this.events(cmd);
      case 'mcp':
        return this.mcp(cmd);
      case 'names':
        return this.names(cmd);
      case 'gateway':
        return this.gateway(cmd);
      case 'ui':
        return this.ui(cmd);
      case 'sessions':
        return this.endSession(cmd);
    }
  }

  /** How many references a tenant's own tenant-wide token lists in one of its sessions. */
  private async sessionCount(t: number, session: string): Promise<number> {
    const path = `/v1/artifacts?session=${encodeURIComponent(session)}&limit=1000`;
    const a = await this.send('sessions.check', this.creds.tenant[t]!, 'GET', path);
    this.expectStatus(a, [200], 'list a session', 'sessions.check', this.creds.tenant[t]!);
    return a.json.items.length;
  }

  /**
   * DELETE /v1/sessions/{id}: a session-bound token ends its own session only (another, or another
   * tenant's name: 403); a tenant-wide token any of its tenant's, and another tenant's session of the
   * same name finds nothing. The common session's other holders keep what they hold there.
   */
  private async endSession(cmd: Extract<Cmd, { op: 'sessions' }>) {
    const cred = this.cred(cmd.who);
    const t = Math.max(cred.tenant, 0);
    const own = cred.session ?? cmd.who.session;
    const session = {
      own: sessionOf(t, own),
      other: sessionOf(t, (own + 1) % 3),
      foreign: sessionOf((t + 1) % 3, own),
      common: COMMON_SESSION,
    }[cmd.whose];
    const query = cmd.user && cred.kind !== 'session' ? `?user=${userOf(t, 0)}` : '';
    const bystander = (t + 1) % 3;
    const watch =
      (cred.kind === 'tenant' || cred.kind === 'admin') && (cmd.whose === 'common' || cmd.whose === 'foreign');
    const before = watch ? await this.sessionCount(bystander, session) : 0;
    const path = `/v1/sessions/${encodeURIComponent(session)}${query}`;
    const a = await this.send('sessions.end', cred, 'DELETE', path, { echoed: [session] });
    if (cred.kind === 'operator') return;
    if (cred.kind === 'session' && cmd.whose !== 'own') {
      this.expectStatus(a, [403], 'a session-bound token ending another session', 'sessions.end', cred);
      return;
    }
    this.expectStatus(a, [200], 'end a session of its own tenant', 'sessions.end', cred);
    if (cmd.whose === 'foreign' && (a.json.refs !== 0 || a.json.bytes !== 0 || a.json.versions !== 0))
      this.breach(
        "ending another tenant's session name removed something",
        'sessions.end',
        cred,
        a.request,
        200,
        a.text,
      );
    if (a.json.refs > 0) this.saw('sessions.end with refs');
    if (watch) {
      const after = await this.sessionCount(bystander, session);
      if (after !== before)
        this.breach(
          `${tenantId(bystander)}'s references in ${session} went from ${before} to ${after}`,
          'sessions.end',
          cred,
          a.request,
          a.status,
          a.text,
        );
      if (before > 0) this.saw("sessions.end next to another tenant's references");
    }
  }

  private async put(cmd: Extract<Cmd, { op: 'put' }>) {
    const cred = this.cred(cmd.who);
    const t = Math.max(cred.tenant, 0);
    const word = WORDS[t];
    let body: string;
    const own = cmd.shared ? this.sharedPayloads : this.payloads[t]!;
    if (cmd.repeat && own.length > 0) body = own[cmd.pick % own.length]!;
    else {
      const n = this.counter++;
      const head = cmd.shared ? `shared-payload-${n}-${cmd.salt}` : `payload-of-${word}-${n}-${cmd.salt}`;
      body = `${head}\n${`${head} `.repeat(Math.ceil(cmd.pad / (head.length + 1)))}`;
      own.push(body);
    }
    const session = cred.kind === 'session' ? cred.session! : cmd.session;
    const headers: Record<string, string> = { 'Content-Type': MIMES[cmd.mime]! };
    if (cmd.filename) headers['X-Artifact-Filename'] = `${word}-file-${this.counter++}.txt`;
    if (cmd.ns !== 0) headers['X-Artifact-Namespace'] = namespaceOf(t, cmd.ns);
    if (cmd.meta)
      headers['X-Artifact-Meta'] = JSON.stringify({ note: `${word}-meta-${this.counter++}`, owner: tenantId(t) });
    if (cmd.meta) headers['X-Artifact-Source'] = JSON.stringify({ tool: `${word}-tool` });
    if (cmd.ttl) headers['X-Artifact-Ttl'] = '86400';
    if (cmd.trace !== null) headers['X-Artifact-Trace'] = traceName(t, cmd.trace);
    if (cred.kind === 'session') {
      // A bound token naming another session of its tenant is refused.
      if (cmd.wrongSession) headers['X-Artifact-Session'] = sessionOf(t, (cred.session! + 1) % 3);
    } else {
      if (session !== null) headers['X-Artifact-Session'] = sessionName(t, session);
      if (cmd.user !== null) headers['X-Artifact-User'] = userOf(t, cmd.user);
    }
    const a = await this.send('artifacts.put', cred, 'POST', `/v1/artifacts${cmd.link ? '?url=proxy' : ''}`, {
      headers,
      body,
    });
    if (cred.kind === 'session' && cmd.wrongSession)
      this.expectStatus(a, [403], 'a bound token naming another session', 'artifacts.put', cred);
    if (a.status === 200 || a.status === 201) {
      this.remember(t, session, a.json, cmd.shared);
      if (a.json.url) await this.download('download', cred, a.json.url as string, {});
    }
  }

  private async get(cmd: Extract<Cmd, { op: 'get' }>) {
    const cred = this.cred(cmd.who);
    const { id, foreign } = this.target(cred, cmd.target);
    const headers: Record<string, string> = {};
    const range = [undefined, 'bytes=0-31', 'bytes=5-', 'bytes=-10', 'bytes=100000-'][cmd.range];
    if (range) headers.Range = range;
    if (cmd.conditional) {
      const hex = id.slice(-24);
      headers['If-None-Match'] = `"${hex}${'0'.repeat(40)}"`;
    }
    const disposition = ['', '?disposition=inline', '?disposition=attachment'][cmd.disposition];
    const n = this.narrowing(cred, cmd.narrow);
    const get = (x: string) =>
      this.send('artifacts.get', cred, 'GET', withQuery(`/v1/artifacts/${x}${disposition}`, n.query), {
        headers: { ...headers, ...n.headers },
      });
    await this.narrowedRead('artifacts.get', cred, n, { id, foreign }, get);
  }

  private async list(cmd: Extract<Cmd, { op: 'list' }>) {
    const cred = this.cred(cmd.who);
    const t = Math.max(cred.tenant, 0);
    const q = new URLSearchParams();
    const headers: Record<string, string> = {};
    const own = cred.kind === 'session' ? cred.session! : 0;
    const session = {
      none: undefined,
      own: sessionOf(t, own),
      other: sessionOf(t, (own + 1) % 3),
      foreign: sessionOf((t + 1 + (own % 2)) % 3, own),
      common: COMMON_SESSION,
    }[cmd.session];
    if (session !== undefined) {
      if (cmd.header) headers['X-Artifact-Session'] = session;
      else q.set('session', session);
    }
    if (cmd.trace) q.set('trace', traceName(t, cmd.limit % 4));
    if (cmd.ns !== null) q.set('namespace', namespaceOf(t, cmd.ns));
    if (cmd.mime) q.set('mimePrefix', 'text/');
    if (cmd.link) q.set('url', 'proxy');
    q.set('limit', String(cmd.limit));
    let cursor: string | undefined;
    for (let page = 0; page < cmd.pages; page++) {
      const a = await this.send(
        'artifacts.list',
        cred,
        'GET',
        `/v1/artifacts?${q}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers },
      );
      if (a.status !== 200) return;
      const items = a.json.items as { id: string; url?: string }[];
      if (cmd.session === 'foreign' && items.length > 0)
        this.breach(
          "a listing of another tenant's session is not empty",
          'artifacts.list',
          cred,
          q.toString(),
          a.status,
          a.text,
        );
      const withLink = items.find((i) => i.url);
      if (withLink && page === 0) await this.download('download', cred, withLink.url!, {});
      cursor = a.json.nextCursor as string | undefined;
      if (!cursor) return;
    }
  }

  private async url(cmd: Extract<Cmd, { op: 'url' }>) {
    const cred = this.cred(cmd.who);
    const { id, foreign } = this.target(cred, cmd.target);
    const bodies = [undefined, '{}', JSON.stringify({ mode: 'proxy', disposition: 'inline' })];
    const body = bodies[cmd.body];
    const n = this.narrowing(cred, cmd.narrow);
    const url = (x: string) =>
      this.send(
        'artifacts.url',
        cred,
        'POST',
        withQuery(`/v1/artifacts/${x}/url`, n.query),
        body === undefined
          ? { headers: n.headers }
          : { headers: { ...n.headers, 'Content-Type': 'application/json' }, body },
      );
    const a = await this.narrowedRead('artifacts.url', cred, n, { id, foreign }, url);
    if (a.status !== 200) return;
    await this.download('download', cred, a.json.url as string, {}, cmd.tamper);
  }

  /**
   * Fetches a signed link without a token, as a browser would; `tamper` 1 swaps in another
   * tenant's id, 2 names another tenant, 3 asks with HEAD.
   */
  private async download(kind: string, cred: Cred, link: string, headers: Record<string, string>, tamper = 0) {
    const u = new URL(link);
    let path = `${u.pathname}${u.search}`;
    const t = Math.max(cred.tenant, 0);
    if (tamper === 1) {
      const other = this.ids[(t + 1) % 3]!.find((id) => !this.sharedIds.includes(id)) ?? NEVER_ID;
      path = path.replace(/^\/v1\/download\/[^?]+/, `/v1/download/${other}`);
    }
    if (tamper === 2) path = path.replace(/([?&]tenant=)[^&]*/, `$1${tenantId((t + 1) % 3)}`);
    const a = await this.send(kind, cred, tamper === 3 ? 'HEAD' : 'GET', path, { headers, auth: false });
    if (tamper === 1 || tamper === 2) this.expectStatus(a, [403], 'an altered download link', kind, cred);
    return a;
  }

  private tenantQuery(cred: Cred, param: TenantParam, pick: number): string | undefined {
    if (param === 'none') return undefined;
    if (cred.tenant < 0) return tenantId(pick % 3);
    return tenantId(param === 'own' ? cred.tenant : (cred.tenant + 1 + (pick % 2)) % 3);
  }

  private async usage(cmd: Extract<Cmd, { op: 'usage' }>) {
    const cred = this.cred(cmd.who);
    const tenant = this.tenantQuery(cred, cmd.tenant, cmd.top);
    const a = await this.send('usage', cred, 'GET', `/v1/usage?top=${cmd.top}${tenant ? `&tenant=${tenant}` : ''}`);
    if (cred.kind === 'operator') return;
    if (cmd.tenant === 'foreign') return this.expectStatus(a, [403], 'usage naming another tenant', 'usage', cred);
    this.expectStatus(a, [200], 'usage of its own tenant', 'usage', cred);
    await this.checkUsageFigures(cred, a);
  }

  /** A tenant's usage figures are the operator's figures for that tenant (or session), nothing more. */
  private async checkUsageFigures(cred: Cred, a: Answer) {
    const report = a.json as {
      tenants: { tenantId: string; bytes: number; count: number }[];
      sessions: { sessionId: string; bytes: number; count: number }[];
      traces: { traceId: string; bytes: number; count: number }[];
      retentionRuns: unknown[];
      rateLimited?: { tenantId: string }[];
    };
    const op = await this.send(
      'usage',
      this.creds.operator,
      'GET',
      `/v1/usage?top=1000&tenant=${tenantId(cred.tenant)}`,
    );
    const full = op.json as typeof report;
    const fail = (why: string) =>
      this.breach(
        `usage figures: ${why}\n  operator's view of ${tenantId(cred.tenant)}: ${op.text.slice(0, 1500)}`,
        'usage',
        cred,
        'GET /v1/usage',
        a.status,
        a.text,
      );
    const figures = (rows: { bytes: number; count: number }[]) => rows.map((r) => `${r.bytes}/${r.count}`).join(',');
    if (cred.kind === 'session') {
      const mine = full.sessions.filter((r) => r.sessionId === sessionOf(cred.tenant, cred.session!));
      if (report.sessions.length > 1 || figures(report.sessions) !== figures(mine))
        fail('the session rows are not its session as the operator sees it');
      if (report.tenants.length > 1 || figures(report.tenants) !== figures(mine))
        fail("the tenant row is not its session's figures");
      const traceBytes = new Map(full.traces.map((r) => [r.traceId, r.bytes]));
      for (const r of report.traces)
        if (!(r.bytes <= (traceBytes.get(r.traceId) ?? -1)))
          fail(`trace ${r.traceId} counts more than the whole trace`);
    } else {
      if (figures(report.tenants) !== figures(full.tenants))
        fail("the tenant row is not the operator's figure for the tenant");
      for (const part of ['sessions', 'traces'] as const) {
        const key = part === 'sessions' ? 'sessionId' : 'traceId';
        const theirs = new Map(
          (full[part] as Record<string, unknown>[]).map((r) => [r[key], `${String(r.bytes)}/${String(r.count)}`]),
        );
        for (const r of report[part] as Record<string, unknown>[])
          if (theirs.get(r[key]) !== `${String(r.bytes)}/${String(r.count)}`)
            fail(`${part} row ${String(r[key])} differs from the operator's`);
      }
    }
    if (cred.kind === 'admin') {
      if (JSON.stringify(report.retentionRuns) !== JSON.stringify(full.retentionRuns))
        fail("retention figures are not the tenant's part of each run");
    } else if (report.retentionRuns.length > 0) fail('retention figures shown to a token without admin');
  }

  private async admin(cmd: Extract<Cmd, { op: 'admin' }>) {
    const cred = this.cred(cmd.who);
    const tenant = this.tenantQuery(cred, cmd.tenant, cmd.target.pick);
    const tq = tenant ? `tenant=${tenant}` : '';
    const tenantRefused = cred.kind !== 'operator' && cmd.tenant === 'foreign';
    switch (cmd.action) {
      case 'retention': {
        const a = await this.send('admin.retention', cred, 'POST', '/v1/admin/retention');
        this.expectStatus(
          a,
          cred.kind === 'operator' ? [200] : [403],
          'retention is for operators',
          'admin.retention',
          cred,
        );
        return;
      }
      case 'fsck': {
        const a = await this.send('admin.fsck', cred, 'POST', '/v1/admin/fsck');
        this.expectStatus(a, cred.kind === 'operator' ? [200] : [403], 'fsck is for operators', 'admin.fsck', cred);
        return;
      }
      case 'audit': {
        const a = await this.send(
          'admin.audit',
          cred,
          'GET',
          `/v1/admin/audit?${tq}&limit=${1 + (cmd.target.pick % 200)}`,
        );
        if (cred.kind === 'admin')
          this.expectStatus(a, tenantRefused ? [403] : [200], 'the audit trail of a tenant admin', 'admin.audit', cred);
        else if (cred.kind !== 'operator')
          this.expectStatus(a, [403], 'the audit trail without admin', 'admin.audit', cred);
        return;
      }
      case 'purge': {
        // The operator purges in the tenant the id belongs to (when it names one).
        let id: string;
        let foreign = false;
        let path: string;
        if (cred.kind === 'operator') {
          const t = cmd.target.pick % 3;
          const pool = this.ids[t]!;
          id = pool.length > 0 && cmd.target.from !== 'never' ? pool[cmd.target.pick % pool.length]! : NEVER_ID;
          path = `/v1/admin/artifacts/${id}${cmd.tenant === 'none' ? '' : `?tenant=${tenantId(t)}`}`;
        } else {
          ({ id, foreign } = this.target(cred, cmd.target));
          path = `/v1/admin/artifacts/${id}${tq ? `?${tq}` : ''}`;
        }
        if (cred.kind === 'admin' && !tenantRefused) {
          // Its audit event goes to this tenant's admins, and to no other tenant's.
          for (const watcher of [cred, this.creds.admin[(cred.tenant + 1 + (cmd.target.pick % 2)) % 3]!])
            await this.openStream('events', watcher, '/v1/events?audit=true', { Accept: 'text/event-stream' }, 1);
        }
        const a = await this.send('admin.purge', cred, 'DELETE', path);
        if (cred.kind === 'admin' && !tenantRefused) {
          if (foreign)
            await this.expectMissing(a, id, 'admin.purge', cred, (x) =>
              this.send('admin.purge', cred, 'DELETE', path.replace(id, x)),
            );
          if (a.status === 200 && Object.keys(a.json).sort().join(',') !== 'id,refs')
            this.breach(
              'a purge answer to a tenant admin says more than id and refs',
              'admin.purge',
              cred,
              path,
              a.status,
              a.text,
            );
        } else if (cred.kind !== 'operator')
          this.expectStatus(a, [403], 'purge without admin, or in another tenant', 'admin.purge', cred);
        return;
      }
    }
  }

  /** Opens GET /v1/events; the body is read after `liveFor` more commands ran. */
  private async events(cmd: Extract<Cmd, { op: 'events' }>) {
    const cred = this.cred(cmd.who);
    const t = Math.max(cred.tenant, 0);
    const q = new URLSearchParams();
    const own = cred.session ?? cmd.back % 3;
    if (cmd.filter === 'session') q.set('session', sessionOf(t, own));
    if (cmd.filter === 'foreignSession') q.set('session', sessionOf((t + 1) % 3, own));
    if (cmd.filter === 'common')
      q.set(cmd.back % 2 ? 'session' : 'trace', cmd.back % 2 ? COMMON_SESSION : COMMON_TRACE);
    if (cmd.filter === 'trace') q.set('trace', traceName(t, cmd.back % 4));
    if (cmd.filter === 'ownTenant') q.set('tenant', tenantId(t));
    if (cmd.filter === 'foreignTenant') q.set('tenant', tenantId((t + 1 + (cmd.back % 2)) % 3));
    if (cmd.audit) q.set('audit', 'true');
    if (cmd.resume === 'zero') q.set('lastEventId', '0');
    if (cmd.resume === 'recent') q.set('lastEventId', String(Math.max(0, this.lastPosition - cmd.back)));
    const opened = await this.openStream(
      'events',
      cred,
      `/v1/events?${q}`,
      { Accept: 'text/event-stream' },
      cmd.liveFor,
    );
    if (cred.kind !== 'operator' && cmd.filter === 'foreignTenant')
      this.expectStatus(opened, [403], 'events naming another tenant', 'events', cred);
    else if (!cmd.audit || cred.kind === 'admin' || cred.kind === 'operator')
      this.expectStatus(opened, [200], 'an event stream', 'events', cred);
  }

  /** A streamed GET: headers now, body (read for a short while, then cancelled) later. */
  private async openStream(
    kind: string,
    cred: Cred,
    path: string,
    headers: Record<string, string>,
    liveFor: number,
    onText?: (text: string) => void,
  ): Promise<Answer> {
    const all = { ...bearer(cred.token), ...headers };
    const res = await this.t.app.request(path, { method: 'GET', headers: all });
    const request = `GET ${path}\n${JSON.stringify(all)}\n`;
    this.count(kind, res.status);
    if (res.status !== 200 || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const text = await res.text();
      const json = jsonOf(res, text);
      this.inspect(kind, cred, request, res.status, res.headers, text, json);
      return { request, status: res.status, headers: res.headers, text, json };
    }
    this.inspect(kind, cred, request, res.status, res.headers, '', undefined);
    this.streams.push({ kind, cred, request, res, remaining: liveFor, ...(onText ? { onText } : {}) });
    if (liveFor === 0) await this.drain(false);
    return { request, status: res.status, headers: res.headers, text: '', json: undefined };
  }

  /** Reads the streams whose turn came (or all of them), then cancels them. */
  private async drain(all: boolean) {
    const due = all ? this.streams.splice(0) : this.streams.filter((s) => s.remaining <= 0);
    if (!all) for (const s of due) this.streams.splice(this.streams.indexOf(s), 1);
    for (const s of due) {
      const started = performance.now();
      const text = await readFor(s.res, SSE_BUDGET_MS);
      const values: unknown[] = [];
      for (const block of text.split('\n\n')) {
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) this.lastPosition = Math.max(this.lastPosition, Number(line.slice(4)) || 0);
          if (line.startsWith('data: ')) {
            try {
              values.push(JSON.parse(line.slice(6)));
            } catch {
              // not JSON
            }
          }
        }
      }
      this.inspect(s.kind, s.cred, s.request, 200, new Headers(), text, values);
      if (s.cred.kind !== 'operator') {
        const refs = values.filter((v) => (v as { ref?: unknown }).ref).length;
        const audits = values.filter((v) => (v as { audit?: unknown }).audit).length;
        if (audits > 0 && s.cred.kind !== 'admin')
          this.breach('audit events streamed to a token without admin', s.kind, s.cred, s.request, 200, text);
        if (refs > 0) this.saw(`${s.kind} with artifact events`, refs);
        if (audits > 0) this.saw(`${s.kind} with audit events`, audits);
      }
      s.onText?.(text);
      this.elapsed.set(s.kind, (this.elapsed.get(s.kind) ?? 0) + performance.now() - started);
    }
  }

  /** Counts down the open streams after each command and reads the due ones. */
  async tick() {
    for (const s of this.streams) s.remaining--;
    if (this.streams.some((s) => s.remaining <= 0)) await this.drain(false);
  }

  // --- /mcp

  private async rpc(
    kind: string,
    cred: Cred,
    sessionId: string | undefined,
    message: Record<string, unknown>,
    path = '/mcp',
  ): Promise<Answer> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    if (sessionId)
      Object.assign(headers, { 'Mcp-Session-Id': sessionId, 'Mcp-Protocol-Version': LATEST_PROTOCOL_VERSION });
    const a = await this.send(kind, cred, 'POST', path, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    });
    if ((a.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const data = a.text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as unknown);
      a.json = data.find((d) => (d as { id?: unknown }).id === message.id) ?? data[0];
      // Same checks as a JSON answer, on the JSON-RPC message inside the stream.
      this.inspect(
        kind,
        cred,
        `POST ${path}\n${JSON.stringify(headers)}\n${JSON.stringify(message)}`,
        a.status,
        new Headers(),
        '',
        a.json,
      );
    }
    const result = a.json?.result;
    if (result?.resources?.length > 0) this.saw(`${kind} with resources`);
    if (result?.contents?.length > 0) this.saw(`${kind} with contents`);
    if (result?.structuredContent) this.saw(`${kind} with structured content`);
    return a;
  }

  private async mcpSession(cred: Cred): Promise<string | undefined> {
    const open = this.mcpSessions.get(cred.label);
    if (open) return open.id;
    const init = await this.rpc('mcp.initialize', cred, undefined, {
      id: this.rpcId++,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'isolation', version: '1.0.0' },
      },
    });
    if (cred.kind === 'operator') return undefined;
    this.expectStatus(init, [200], 'MCP initialize', 'mcp.initialize', cred);
    const id = init.headers.get('mcp-session-id')!;
    await this.rpc('mcp.initialized', cred, id, { method: 'notifications/initialized' });
    this.mcpSessions.set(cred.label, { id, tenant: cred.tenant, cred, listening: false });
    return id;
  }

  private async mcp(cmd: Extract<Cmd, { op: 'mcp' }>) {
    const cred = this.cred(cmd.who);
    const session = await this.mcpSession(cred);
    if (session === undefined) return;
    const call = (kind: string, method: string, params: Record<string, unknown>) =>
      this.rpc(kind, cred, session, { id: this.rpcId++, method, params });
    const { id, foreign } = this.target(cred, cmd.target);
    switch (cmd.action) {
      case 'list': {
        let cursor: string | undefined;
        for (let page = 0; page < 2; page++) {
          const a = await call('mcp.resources/list', 'resources/list', cursor ? { cursor } : {});
          cursor = a.json?.result?.nextCursor as string | undefined;
          if (!cursor) break;
        }
        return;
      }
      case 'read': {
        const a = await call('mcp.resources/read', 'resources/read', { uri: `artifact://${id}` });
        if (foreign && a.json?.error?.code !== -32002)
          this.breach(
            "resources/read of another tenant's id did not answer not found",
            'mcp.resources/read',
            cred,
            id,
            a.status,
            a.text,
          );
        return;
      }
      case 'templates':
        await call('mcp.resources/templates/list', 'resources/templates/list', {});
        return;
      case 'tools':
        await call('mcp.tools/list', 'tools/list', {});
        return;
      case 'look': {
        // The model's tools for looking inside: another tenant's id is missing to each of them.
        const tool = (['artifact_read', 'artifact_search', 'artifact_query', 'artifact_list'] as const)[
          cmd.liveFor % 4
        ]!;
        const args = {
          artifact_read: { id, limit: 3 },
          artifact_search: { id, pattern: 'payload' },
          artifact_query: { id, path: '$' },
          artifact_list: { limit: 5 },
        }[tool];
        const a = await call('mcp.tools/call', 'tools/call', { name: tool, arguments: args });
        if (foreign && tool !== 'artifact_list' && a.json?.result?.isError !== true)
          this.breach(`${tool} of another tenant's id did not fail`, 'mcp.tools/call', cred, id, a.status, a.text);
        return;
      }
      case 'info': {
        const a = await call('mcp.tools/call', 'tools/call', { name: 'artifact_info', arguments: { id } });
        if (foreign && a.json?.result?.isError !== true)
          this.breach(
            "artifact_info of another tenant's id did not fail",
            'mcp.tools/call',
            cred,
            id,
            a.status,
            a.text,
          );
        return;
      }
      case 'url': {
        const a = await call('mcp.tools/call', 'tools/call', {
          name: 'artifact_url',
          arguments: { id, ...(cmd.liveFor % 2 ? { mode: 'direct' } : {}) },
        });
        if (foreign && a.json?.result?.isError !== true)
          this.breach("artifact_url of another tenant's id did not fail", 'mcp.tools/call', cred, id, a.status, a.text);
        const link = a.json?.result?.structuredContent?.url as string | undefined;
        if (link) await this.download('download', cred, link, { Range: 'bytes=0-63' }, cmd.liveFor % 4 === 1 ? 1 : 0);
        return;
      }
      case 'subscribe': {
        const a = await call('mcp.resources/subscribe', 'resources/subscribe', { uri: `artifact://${id}` });
        if (foreign && a.json?.error?.code !== -32002)
          this.breach(
            "subscribing to another tenant's id did not answer not found",
            'mcp.resources/subscribe',
            cred,
            id,
            a.status,
            a.text,
          );
        return;
      }
      case 'listen': {
        const entry = this.mcpSessions.get(cred.label)!;
        if (entry.listening) return;
        entry.listening = true;
        const opened = await this.openStream(
          'mcp.stream',
          cred,
          '/mcp',
          { Accept: 'text/event-stream', 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': LATEST_PROTOCOL_VERSION },
          cmd.liveFor,
          () => {
            entry.listening = false;
          },
        );
        if (opened.status !== 200) entry.listening = false;
        return;
      }
      case 'close': {
        if (cmd.liveFor % 2) return;
        await this.send('mcp.delete', cred, 'DELETE', '/mcp', {
          headers: { 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': LATEST_PROTOCOL_VERSION },
        });
        this.mcpSessions.delete(cred.label);
        return;
      }
      case 'hijack': {
        // Another tenant's open MCP session, used with this caller's token: it must not exist for us.
        const theirs = [...this.mcpSessions.values()].find((s) => s.tenant !== cred.tenant);
        const victim = theirs?.id ?? (await this.mcpSession(this.creds.tenant[(cred.tenant + 1) % 3]!))!;
        const a = await this.rpc('mcp.hijack', cred, victim, {
          id: this.rpcId++,
          method: 'resources/list',
          params: {},
        });
        this.expectStatus(a, [404], "another tenant's MCP session", 'mcp.hijack', cred);
        return;
      }
      case 'badTool':
        await call('mcp.tools/call', 'tools/call', { name: 'artifact_delete', arguments: { id } });
        return;
    }
  }

  /** What the /ui page does when a token signs in: usage, the event stream, a listing, a preview. */
  private async ui(cmd: Extract<Cmd, { op: 'ui' }>) {
    const cred = this.cred(cmd.who);
    const usage = await this.send('ui.usage', cred, 'GET', '/v1/usage?top=200');
    if (cred.kind !== 'operator') await this.checkUsageFigures(cred, usage);
    const q = new URLSearchParams();
    if (cred.kind !== 'session' && !cmd.allSessions && cred.tenant >= 0)
      q.set('session', sessionOf(cred.tenant, cmd.pick % 3));
    await this.openStream('ui.events', cred, `/v1/events?${q}`, { Accept: 'text/event-stream' }, cmd.liveFor);
    q.set('limit', '200');
    const page = await this.send('ui.list', cred, 'GET', `/v1/artifacts?${q}`);
    const items = (page.json?.items ?? []) as { id: string }[];
    if (items.length === 0) return;
    const id = items[cmd.pick % items.length]!.id;
    const link = await this.send('ui.url', cred, 'POST', `/v1/artifacts/${encodeURIComponent(id)}/url`, {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode: cmd.mode, disposition: cmd.disposition }),
    });
    if (link.status === 200)
      await this.download('ui.preview', cred, link.json.url as string, { Range: `bytes=0-${256 * 1024 - 1}` });
  }

  // --- /v1/names: a tenant's names in a shared app and its own; session tokens use their session's

  /** Names each credential saved, as `app\nname` (what it may read back). */
  private readonly namesOf = new Map<string, string[]>();

  private async names(cmd: Extract<Cmd, { op: 'names' }>) {
    const cred = this.cred(cmd.who);
    const t = Math.max(cred.tenant, 0);
    const app = cmd.pick % 2 === 0 ? 'shared.app' : `${WORDS[t]}.app`;
    const scope = cred.kind === 'session' ? '' : '&scope=user';
    const own = this.namesOf.get(cred.label) ?? [];
    const path = (a: string, tail: string, name: string) =>
      `/v1/names/${a}${tail}?name=${encodeURIComponent(name)}${scope}`;
    /** One of the names this credential saved, as [app, name]. */
    const ownName = () => own[cmd.pick % Math.max(own.length, 1)]?.split('\n') as [string, string] | undefined;
    if (cred.kind === 'operator') {
      await this.send('names.save', cred, 'POST', path('shared.app', '', 'op-name'), { body: 'x' });
      return;
    }
    switch (cmd.action) {
      case 'save': {
        const name = `${WORDS[t]}-name-${cmd.pick % 5}`;
        const a = await this.send('names.save', cred, 'POST', path(app, '', name), {
          headers: { 'Content-Type': 'text/plain' },
          body: `payload-of-${WORDS[t]}-name-${this.counter++}`,
        });
        this.expectStatus(a, [201], 'save a version', 'names.save', cred);
        const key = `${app}\n${name}`;
        if (!own.includes(key)) this.namesOf.set(cred.label, [...own, key]);
        return;
      }
      case 'read':
      case 'versions': {
        const picked = ownName();
        if (!picked) return;
        const [a, name] = picked;
        const kind = cmd.action === 'read' ? 'names.read' : 'names.versions';
        const res = await this.send(kind, cred, 'GET', path(a, cmd.action === 'read' ? '/content' : '/versions', name));
        // Its own name, unless it deleted it since.
        this.expectStatus(res, [200, 404], 'read an own name', kind, cred);
        if (res.status === 200 && cmd.action === 'read') this.saw('names.read with bytes');
        return;
      }
      case 'foreign': {
        const others = [...this.namesOf.entries()].filter(
          ([label]) => !label.endsWith(tenantId(t)) && !label.includes(`:${WORDS[t]}-`),
        );
        const pool = others.flatMap(([, keys]) => keys);
        const key = pool[cmd.pick % Math.max(pool.length, 1)];
        if (!key) return;
        const [a, name] = key.split('\n') as [string, string];
        if (name.startsWith(WORDS[t]!)) return;
        const res = await this.send('names.foreign', cred, 'GET', path(a, '/content', name));
        this.expectStatus(res, [404], "another tenant's name", 'names.foreign', cred);
        return;
      }
      case 'list': {
        const res = await this.send('names.list', cred, 'GET', `/v1/names/${app}?${scope.slice(1)}`);
        this.expectStatus(res, [200], 'list names', 'names.list', cred);
        if (res.json?.items?.length > 0) this.saw('names.list with items');
        return;
      }
      case 'delete': {
        const picked = ownName();
        if (!picked) return;
        const [a, name] = picked;
        const res = await this.send('names.delete', cred, 'DELETE', path(a, '', name));
        this.expectStatus(res, [204, 404], 'delete an own name', 'names.delete', cred);
        return;
      }
    }
  }

  // --- /mcp/gateway and /v1/mcp/servers: each tenant sees only the gateway servers listed for it

  private readonly gatewaySessions = new Map<string, { id: string; tenant: number }>();

  private async gatewaySession(cred: Cred): Promise<string | undefined> {
    const open = this.gatewaySessions.get(cred.label);
    if (open) return open.id;
    const init = await this.rpc(
      'gateway.initialize',
      cred,
      undefined,
      {
        id: this.rpcId++,
        method: 'initialize',
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'isolation', version: '1.0.0' },
        },
      },
      GATEWAY_PATH,
    );
    if (cred.kind === 'operator') return undefined;
    this.expectStatus(init, [200], 'gateway initialize', 'gateway.initialize', cred);
    const id = init.headers.get('mcp-session-id')!;
    await this.rpc('gateway.initialized', cred, id, { method: 'notifications/initialized' }, GATEWAY_PATH);
    this.gatewaySessions.set(cred.label, { id, tenant: cred.tenant });
    return id;
  }

  private async gateway(cmd: Extract<Cmd, { op: 'gateway' }>) {
    const cred = this.cred(cmd.who);
    if (cred.kind === 'operator') {
      await this.send('gateway.servers', cred, 'GET', '/v1/mcp/servers');
      await this.gatewaySession(cred);
      return;
    }
    const own = GATEWAY_SERVER_OF[cred.tenant]!;
    const foreign =
      GATEWAY_SERVER_OF[(cred.tenant + 1) % 3] === own
        ? GATEWAY_SERVER_OF[(cred.tenant + 2) % 3]!
        : GATEWAY_SERVER_OF[(cred.tenant + 1) % 3]!;
    const rpc = async (kind: string, method: string, params: Record<string, unknown>) => {
      const session = await this.gatewaySession(cred);
      return this.rpc(kind, cred, session, { id: this.rpcId++, method, params }, GATEWAY_PATH);
    };
    switch (cmd.action) {
      case 'servers': {
        const a = await this.send('gateway.servers', cred, 'GET', '/v1/mcp/servers');
        this.expectStatus(a, [200], 'gateway servers', 'gateway.servers', cred);
        const names = (a.json?.servers ?? []).map((x: { name: string }) => x.name);
        if (JSON.stringify(names) !== JSON.stringify([own]))
          this.breach(
            `gateway servers listed ${JSON.stringify(names)}, want ["${own}"]`,
            'gateway.servers',
            cred,
            a.request,
            a.status,
            a.text,
          );
        return;
      }
      case 'resources': {
        const a = await this.send('gateway.resources', cred, 'GET', `/v1/mcp/servers/${own}/resources`);
        this.expectStatus(a, [200], 'gateway resources', 'gateway.resources', cred);
        if (a.json?.resources?.length > 0) this.saw('gateway.resources with resources');
        return;
      }
      case 'read': {
        const path = `/v1/mcp/servers/${own}/resources/read?uri=${encodeURIComponent('scripted://logo.png')}`;
        const a = await this.send('gateway.read', cred, 'GET', path);
        this.expectStatus(a, [200], 'gateway read', 'gateway.read', cred);
        if (a.json?.artifacts?.length > 0) this.saw('gateway.read with artifacts');
        return;
      }
      case 'foreign': {
        for (const path of [
          `/v1/mcp/servers/${foreign}/resources`,
          `/v1/mcp/servers/${foreign}/resources/read?uri=${encodeURIComponent('scripted://counter')}`,
        ]) {
          const a = await this.send('gateway.foreign', cred, 'GET', path);
          this.expectStatus(a, [404], 'a gateway server the tenant may not use', 'gateway.foreign', cred);
        }
        const a = await rpc('gateway.foreign-call', 'tools/call', {
          name: `${foreign}__echo`,
          arguments: { text: 'x' },
        });
        if (!a.json?.error)
          this.breach(
            "a call to another tenant's gateway server did not fail",
            'gateway.foreign-call',
            cred,
            a.request,
            a.status,
            a.text,
          );
        return;
      }
      case 'tools': {
        const a = await rpc('gateway.tools/list', 'tools/list', {});
        const names: string[] = (a.json?.result?.tools ?? []).map((t: { name: string }) => t.name);
        const stray = names.filter((n) => !n.startsWith(`${own}__`) && !n.startsWith('artifact_'));
        if (stray.length > 0 || !names.includes(`${own}__echo`))
          this.breach(
            `gateway tools/list showed ${JSON.stringify(stray)} (own server ${own})`,
            'gateway.tools/list',
            cred,
            a.request,
            a.status,
            a.text,
          );
        return;
      }
      case 'echo': {
        const text = `${WORDS[cred.tenant]}-note-${this.counter++}`;
        const a = await rpc('gateway.tools/call', 'tools/call', { name: `${own}__echo`, arguments: { text } });
        if (a.json?.result?.content?.[0]?.text !== text)
          this.breach(
            'gateway echo did not answer the caller',
            'gateway.tools/call',
            cred,
            a.request,
            a.status,
            a.text,
          );
        return;
      }
      case 'chart': {
        const a = await rpc('gateway.tools/call', 'tools/call', { name: `${own}__chart`, arguments: {} });
        if (a.json?.result?.structuredContent?.image?.artifact) this.saw('gateway.tools/call with a stored artifact');
        return;
      }
      case 'hijack': {
        const theirs = [...this.gatewaySessions.values()].find((x) => x.tenant !== cred.tenant);
        if (!theirs) return;
        const a = await this.rpc(
          'gateway.hijack',
          cred,
          theirs.id,
          { id: this.rpcId++, method: 'tools/list', params: {} },
          GATEWAY_PATH,
        );
        this.expectStatus(a, [404], "another tenant's gateway session", 'gateway.hijack', cred);
        return;
      }
    }
  }

  async close() {
    for (const s of this.streams.splice(0)) await s.res.body?.cancel().catch(() => {});
    await this.t.app.closeMcpSessions();
    // Let cancelled streams see their end before the database closes.
    await new Promise((r) => setTimeout(r, 50));
  }

  async finish() {
    await this.drain(true);
  }
}

/** A JSON answer's value; undefined for anything else (stored bytes may claim a JSON type and not be JSON). */
function jsonOf(res: Response, text: string): any {
  if (!text || !(res.headers.get('content-type') ?? '').includes('json')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Reads a streamed body for `budgetMs` (or to its end), then cancels it. */
async function readFor(res: Response, budgetMs: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + budgetMs;
  try {
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const next = await Promise.race([
        reader.read(),
        new Promise<null>((ok) => (timer = setTimeout(() => ok(null), left))),
      ]);
      clearTimeout(timer);
      if (next === null || next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text;
}

// ---------------------------------------------------------------------------------------------

describe('tenant isolation', () => {
  beforeAll(async () => {
    gateway = createMcpGateway({ config: gatewayConfig(), connect: nodeUpstreamConnector() });
    await gateway.start();
  }, 60_000);
  afterAll(() => gateway?.close());

  it('the leak detector flags foreign markers, ids and hashes, also encoded, and lets echoes and own data through', () => {
    const owners: Owners = new Map<string, number | 'shared'>([
      ['0123456789abcdef01234567', 1],
      ['aaaaaaaaaaaaaaaaaaaaaaaa', 0],
      ['bbbbbbbbbbbbbbbbbbbbbbbb', 'shared'],
    ]);
    const foreignSha = `0123456789abcdef01234567${'9'.repeat(40)}`;
    // Seen by alpha (0): bravo's (1) data is a leak.
    expect(findLeaks('{"items":[{"filename":"bravo-file-3.txt"}]}', 0, 'GET /v1/artifacts', owners)).toEqual([
      'tnt-bravo name "bravo-file-3.txt"',
    ]);
    expect(findLeaks(`{"blob":"${Buffer.from('payload-of-charlie-7-x').toString('base64')}"}`, 0, '', owners)).toEqual([
      'tnt-charlie name "payload-of-charlie-7-x"',
    ]);
    expect(findLeaks("Content-Disposition: attachment; filename*=UTF-8''%62ravo-file-1.txt", 0, '', owners)).toEqual([
      'tnt-bravo name "bravo-file-1.txt"',
    ]);
    expect(findLeaks('{"id":"art_0123456789abcdef01234567"}', 0, 'GET /v1/artifacts', owners)).toEqual([
      'tnt-bravo id/hash 0123456789abcdef01234567',
    ]);
    expect(findLeaks(`ETag: "${foreignSha}"`, 0, 'HEAD /v1/artifacts/art_0123456789abcdef01234567', owners)).toEqual([
      `tnt-bravo id/hash ${foreignSha}`,
    ]);
    expect(
      findLeaks('{"message":"Your token belongs to tenant \\"tnt-alpha\\"; not tnt-bravo."}', 0, '', owners),
    ).toEqual(['tnt-bravo name "tnt-bravo"']);
    // Echoes of the request, own data, shared bytes and look-alike words are not.
    expect(
      findLeaks(
        '{"code":"not_found","message":"No artifact bravo.tool_0123456789abcdef01234567."}',
        0,
        'GET /v1/artifacts/bravo.tool_0123456789abcdef01234567',
        owners,
      ),
    ).toEqual([]);
    expect(
      findLeaks('{"items":[],"session":"charlie-sess-2"}', 0, 'GET /v1/artifacts?session=charlie-sess-2', owners),
    ).toEqual([]);
    expect(
      findLeaks(
        '{"filename":"alpha-file-1.txt","id":"art_aaaaaaaaaaaaaaaaaaaaaaaa","x":"bbbbbbbbbbbbbbbbbbbbbbbb"}',
        0,
        '',
        owners,
      ),
    ).toEqual([]);
    expect(findLeaks('use alphanumeric characters; Charlie and bravos', 1, '', owners)).toEqual([]);
    // Scope fields.
    expect(
      foreignScopeFields({ tenants: [{ tenantId: 'tnt-alpha' }, { tenantId: 'tnt-bravo' }] }, { tenant: 0 }),
    ).toEqual(['$.tenants[1].tenantId = "tnt-bravo"']);
    expect(
      foreignScopeFields(
        { ref: { scope: { tenantId: 'tnt-alpha', sessionId: 'alpha-sess-2' } } },
        { tenant: 0, session: 0 },
      ),
    ).toEqual(['$.ref.scope.sessionId = "alpha-sess-2" (another session)']);
    expect(
      foreignScopeFields(
        { sessions: [{ tenantId: 'tnt-alpha', sessionId: 'alpha-sess-2', traceId: 'alpha-trace-1' }] },
        { tenant: 0 },
      ),
    ).toEqual([]);
  });

  it(`no response to a tenant's credential carries another tenant's data (seed ${SEED}; replay with ISOLATION_SEED=${SEED})`, {
    timeout: 180_000,
  }, async () => {
    let summary = '';
    await fc.assert(
      fc.asyncProperty(fc.infiniteStream(cmdArb, { noHistory: true }), async (commands) => {
        const t = await createTestApp({ events: { pollMs: 10 }, gateway });
        const run = new Workload(t);
        const started = Date.now();
        try {
          await run.setup();
          for (const cmd of commands) {
            await run.run(cmd);
            await run.tick();
            if (run.total >= TARGET_REQUESTS) break;
          }
          // The admin routes once each by an operator and by a tenant admin, whatever the seed: the
          // stream reaches them seldom, and a seed that never sent an operator's retention run would
          // leave its answer unchecked.
          for (const action of ['retention', 'fsck', 'purge', 'audit'] as const)
            for (const kind of ['operator', 'admin'] as const)
              await run.run({
                op: 'admin',
                who: { kind, tenant: 0, session: 0 },
                action,
                tenant: 'own',
                target: { from: 'own', pick: 0 },
              });
          await run.finish();
        } catch (err) {
          if (err instanceof IsolationBreach)
            err.message = `Isolation broken (seed ${SEED}; replay with ISOLATION_SEED=${SEED}):\n${err.message}`;
          throw err;
        } finally {
          await run.close();
          await t.cleanup();
        }
        summary = [...run.stats]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(
            ([kind, byStatus]) =>
              `${kind}: ${[...byStatus]
                .sort(([a], [b]) => a - b)
                .map(([s, n]) => `${s}×${n}`)
                .join(' ')} (${Math.round(run.elapsed.get(kind) ?? 0)} ms)`,
          )
          .join('\n');
        if (VERBOSE)
          console.log(
            `seed ${SEED}: ${run.total} requests in ${Date.now() - started} ms\n${summary}\n${[...run.seen]
              .sort()
              .map(([what, n]) => `${what}: ${n}`)
              .join('\n')}`,
          );

        // The run could not pass on refusals alone: every route answered, and answered with data.
        expect(run.total).toBeGreaterThanOrEqual(TARGET_REQUESTS);
        const n = (kind: string, ok: (status: number) => boolean) =>
          [...(run.stats.get(kind) ?? new Map<number, number>())].reduce((sum, [s, c]) => sum + (ok(s) ? c : 0), 0);
        const ok = (s: number) => s >= 200 && s < 300;
        const wanted: [string, (s: number) => boolean, number][] = [
          ['artifacts.put', ok, 500],
          ['artifacts.get', ok, 100],
          ['artifacts.head', ok, 20],
          ['artifacts.meta', ok, 20],
          ['artifacts.text', ok, 10],
          ['artifacts.search', ok, 10],
          ['artifacts.query', (s) => s === 200 || s === 415 || s === 422, 10],
          ['artifacts.list', ok, 100],
          ['artifacts.delete', ok, 5],
          ['artifacts.url', ok, 30],
          ['download', ok, 50],
          ['download', (s) => s === 403, 5],
          ['uploads.begin', (s) => s === 400, 5],
          ['uploads.begin', (s) => s === 403, 1],
          ['usage', ok, 50],
          ['usage', (s) => s === 403, 5],
          ['admin.retention', ok, 1],
          ['admin.retention', (s) => s === 403, 1],
          ['admin.fsck', ok, 1],
          ['admin.audit', ok, 5],
          ['admin.purge', ok, 1],
          ['events', ok, 20],
          ['events', (s) => s === 403, 1],
          ['mcp.initialize', ok, 5],
          ['mcp.initialize', (s) => s === 403, 1],
          ['mcp.resources/list', ok, 20],
          ['mcp.resources/read', ok, 20],
          ['mcp.tools/list', ok, 1],
          ['mcp.tools/call', ok, 20],
          ['mcp.hijack', (s) => s === 404, 1],
          ['names.save', ok, 50],
          ['names.save', (s) => s === 403, 1],
          ['names.read', ok, 20],
          ['names.foreign', (s) => s === 404, 10],
          ['names.list', ok, 5],
          ['names.versions', ok, 5],
          ['sessions.end', ok, 10],
          ['sessions.end', (s) => s === 403, 3],
          ['gateway.initialize', ok, 5],
          ['gateway.initialize', (s) => s === 403, 1],
          ['gateway.servers', ok, 5],
          ['gateway.servers', (s) => s === 403, 1],
          ['gateway.resources', ok, 5],
          ['gateway.read', ok, 5],
          ['gateway.foreign', (s) => s === 404, 5],
          ['gateway.tools/list', ok, 5],
          ['gateway.tools/call', ok, 10],
          ['ui.usage', ok, 5],
          ['ui.list', ok, 5],
          ['ui.events', ok, 5],
          ['artifacts.get', (s) => s === 403, 5],
          ['artifacts.put', (s) => s === 403, 5],
        ];
        const withData: [string, number][] = [
          ['artifacts.list with items', 100],
          ['artifacts.get with bytes', 50],
          ['download with bytes', 50],
          ['ui.preview with bytes', 5],
          ['ui.list with items', 5],
          ['usage with session rows', 20],
          ['admin.audit with entries', 5],
          ['events with artifact events', 20],
          ['events with audit events', 1],
          ['mcp.resources/list with resources', 10],
          ['mcp.resources/read with contents', 10],
          ['mcp.tools/call with structured content', 10],
          ['names.read with bytes', 10],
          ['names.list with items', 3],
          ['gateway.resources with resources', 3],
          ['gateway.read with artifacts', 3],
          ['gateway.tools/call with a stored artifact', 3],
          ['sessions.end with refs', 3],
          ["sessions.end next to another tenant's references", 2],
          ['narrowed reads answered', 20],
          ['narrowed reads refused (another session)', 5],
        ];
        const short = [
          ...wanted
            .filter(([kind, test, min]) => n(kind, test) < min)
            .map(([kind, , min]) => `${kind} (want at least ${min})`),
          ...withData
            .filter(([what, min]) => (run.seen.get(what) ?? 0) < min)
            .map(([what, min]) => `${what}: ${run.seen.get(what) ?? 0} (want at least ${min})`),
        ];
        expect(short, `routes not exercised enough (seed ${SEED}):\n${summary}`).toEqual([]);

        // The detector sees what the operator was shown (every tenant) as a leak to any one tenant.
        const everything = run.operatorSamples.join('\n');
        for (const tenant of TENANTS) expect(findLeaks(everything, tenant, '', new Map()).length).toBeGreaterThan(0);
      }),
      { seed: SEED, numRuns: 1, endOnFailure: true },
    );
  });
});
