/**
 * The gateway's configuration: the `mcpServers` JSON that MCP hosts already use, with this package's
 * settings for each server under an `artifacts` key. Parsed strictly: a misspelt key fails at start
 * with the key, where it is, and the closest known key.
 */
import { z } from 'zod';
import { didYouMean } from '../../core/suggest.js';
import { count, parseConfig, resolveTransformConfig, type TransformConfigInput } from '../config.js';
import { GuardrailConfigSchema } from '../guardrail.js';
import { PRESETS, type PresetName } from '../presets.js';
import { ResourceBridgeConfigSchema } from '../resources.js';

const PRESET_NAMES = Object.keys(PRESETS) as [PresetName, ...PresetName[]];

/** Tenant ids, or "*" for every tenant. */
const TenantsSchema = z.union([z.literal('*'), z.array(z.string().min(1).max(128))]);

/** What this package adds beside a server's entry. */
export const ServerArtifactsSchema = z.strictObject({
  /**
   * Which preset applies: a name, "all", or "none". Unset: the preset whose name appears in the
   * server's name at initialize (serverInfo.name) or its config key, else none. `transform.presets` wins.
   */
  preset: z.union([z.enum(PRESET_NAMES), z.literal('all'), z.literal('none')]).optional(),
  /** The transformer's settings for this server's tool results (docs/mcp.md); checked by its own schema. */
  transform: z.record(z.string(), z.unknown()).optional(),
  /** The guardrail's budget for what the host sees of one result. */
  guardrail: z.record(z.string(), z.unknown()).optional(),
  /** Reads of this server's resources: inline limit, timeouts, cache. */
  resources: z.record(z.string(), z.unknown()).optional(),
  /** Tenants that may use this server when the gateway is mounted in the service. Default: none. */
  tenants: TenantsSchema.optional(),
  /** Add a signed download link beside each stored artifact, for the person in the chat. Default true. */
  downloadLinks: z.boolean().optional(),
  /** How long those links stay valid, in seconds. Default 1 day. */
  linkTtlSeconds: z
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .optional(),
  /** Time allowed for one tools/call, reset by each progress notification. Default 5 minutes. */
  callTimeoutMs: count.min(1).optional(),
});
export type ServerArtifacts = z.output<typeof ServerArtifactsSchema>;

/** Keys hosts put in an entry that say nothing to the gateway; accepted and ignored. */
const HOST_ONLY_KEYS = ['autoApprove', 'alwaysAllow', 'description', 'timeout'] as const;
const hostOnly = Object.fromEntries(HOST_ONLY_KEYS.map((k) => [k, z.unknown().optional()]));

const common = {
  /** Skip this server (Cline and others use this key too). */
  disabled: z.boolean().optional(),
  artifacts: ServerArtifactsSchema.optional(),
  ...hostOnly,
};

const StdioEntrySchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  ...common,
});

const RemoteEntrySchema = z.strictObject({
  /** "http" (Streamable HTTP, the default for a url) or "sse" (the older HTTP+SSE transport). */
  type: z.enum(['http', 'streamable-http', 'sse']).optional(),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).default({}),
  ...common,
});

export type StdioEntry = z.output<typeof StdioEntrySchema>;
export type RemoteEntry = z.output<typeof RemoteEntrySchema>;
export type UpstreamEntry = StdioEntry | RemoteEntry;

export const isStdioEntry = (e: UpstreamEntry): e is StdioEntry => 'command' in e;

export interface GatewayConfig {
  /** Upstream servers by their config key, in file order, without the disabled ones. */
  servers: Map<string, UpstreamEntry>;
}

/** Config keys become tool-name prefixes: letters, digits, `-` and `_`, and no `__` inside. */
const SERVER_KEY = /^(?!.*__)[A-Za-z0-9_-]{1,64}$/;

const TOP_KEYS = ['mcpServers'];
const ENTRY_KEYS = ['type', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'disabled', 'artifacts'];

/**
 * Parses a gateway config (the file's JSON, already parsed). `${VAR}` and `${VAR:-default}` in
 * command, args, env, cwd, url and headers are filled from `env`, as Claude Code does, so secrets
 * need not sit in the file. Throws a TypeError naming the key and the reason.
 */
export function parseGatewayConfig(
  input: unknown,
  env: Record<string, string | undefined> = {},
  what = 'gateway',
): GatewayConfig {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new TypeError(`Invalid ${what} config: it must be a JSON object like {"mcpServers": {"name": {…}}}.`);
  for (const key of Object.keys(input))
    if (!TOP_KEYS.includes(key))
      throw new TypeError(`Invalid ${what} config: unknown key ${JSON.stringify(key)}.${didYouMean(key, TOP_KEYS)}`);
  const raw = (input as { mcpServers?: unknown }).mcpServers;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new TypeError(
      `Invalid ${what} config at mcpServers: it must be an object of servers by name, like {"tableau": {"command": "npx", "args": […]}}.`,
    );
  const servers = new Map<string, UpstreamEntry>();
  for (const [name, value] of Object.entries(raw)) {
    const at = `mcpServers.${name}`;
    if (!SERVER_KEY.test(name))
      throw new TypeError(
        `Invalid ${what} config at ${at}: server names are 1-64 letters, digits, "-" and "_", without "__" (the host sees tools as {server}__{tool}).`,
      );
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new TypeError(`Invalid ${what} config at ${at}: each server is an object with "command" or "url".`);
    const entry = value as Record<string, unknown>;
    for (const key of Object.keys(entry))
      if (!ENTRY_KEYS.includes(key) && !(HOST_ONLY_KEYS as readonly string[]).includes(key))
        throw new TypeError(
          `Invalid ${what} config at ${at}: unknown key ${JSON.stringify(key)}.${didYouMean(key, ENTRY_KEYS)}`,
        );
    const hasCommand = 'command' in entry;
    const hasUrl = 'url' in entry;
    if (hasCommand === hasUrl)
      throw new TypeError(
        `Invalid ${what} config at ${at}: give either "command" (a server to spawn on stdio) or "url" (a remote server), ${hasCommand ? 'not both' : 'not neither'}.`,
      );
    const expanded = expandVariables(entry, env, at, what);
    const parsed = parseConfig(
      hasCommand ? StdioEntrySchema : RemoteEntrySchema,
      expanded,
      `${what} server "${name}"`,
    ) as UpstreamEntry;
    if (parsed.disabled) continue;
    checkNested(parsed.artifacts, `${what} server "${name}" artifacts`);
    servers.set(name, parsed);
  }
  return { servers };
}

/** The nested settings are checked by the schemas their consumers parse them with, so errors read alike. */
function checkNested(artifacts: ServerArtifacts | undefined, what: string): void {
  if (!artifacts) return;
  if (artifacts.transform) {
    try {
      resolveTransformConfig(artifacts.transform as TransformConfigInput);
    } catch (err) {
      throw new TypeError(
        `${(err as Error).message.replace(/^Invalid transform config/, `Invalid ${what}.transform config`)}`,
      );
    }
  }
  if (artifacts.guardrail) parseConfig(GuardrailConfigSchema, artifacts.guardrail, `${what}.guardrail`);
  if (artifacts.resources) parseConfig(ResourceBridgeConfigSchema, artifacts.resources, `${what}.resources`);
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const EXPANDED_KEYS = ['command', 'args', 'env', 'cwd', 'url', 'headers'];

function expandVariables(
  entry: Record<string, unknown>,
  env: Record<string, string | undefined>,
  at: string,
  what: string,
): Record<string, unknown> {
  const fill = (text: string, where: string) =>
    text.replace(VARIABLE, (_, name: string, fallback: string | undefined) => {
      const value = env[name] ?? fallback;
      if (value === undefined)
        throw new TypeError(
          `Invalid ${what} config at ${where}: \${${name}} is not set in the environment (write \${${name}:-default} for a default).`,
        );
      return value;
    });
  const walk = (v: unknown, where: string): unknown => {
    if (typeof v === 'string') return fill(v, where);
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${where}[${i}]`));
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, `${where}.${k}`)]));
    return v;
  };
  const out: Record<string, unknown> = { ...entry };
  for (const key of EXPANDED_KEYS) if (key in out) out[key] = walk(out[key], `${at}.${key}`);
  return out;
}

/** The preset a server gets when its entry names none: by serverInfo.name, then by config key. */
export function presetFor(configKey: string, serverInfoName: string | undefined): PresetName | undefined {
  for (const name of [serverInfoName, configKey]) {
    if (!name) continue;
    const lower = name.toLowerCase();
    const found = PRESET_NAMES.find((p) => lower.includes(p));
    if (found) return found;
  }
  return undefined;
}

/** May this tenant use the server? Without a tenant (the stdio gateway, one user) every server is usable. */
export function tenantMayUse(entry: UpstreamEntry, tenantId: string | undefined): boolean {
  if (tenantId === undefined) return true;
  const tenants = entry.artifacts?.tenants;
  return tenants === '*' || (Array.isArray(tenants) && tenants.includes(tenantId));
}
