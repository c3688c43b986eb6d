import { errors } from './errors.js';

/**
 * Namespaces are URL safe: letters of either case (penguiflow's `observation.{ToolName}` is a
 * namespace as it stands), digits, '.', '_' and '-'. Case counts: `Tools` and `tools` are two.
 */
export const NAMESPACE_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
export const MAX_NAMESPACE_CHARS = 128;
export const DEFAULT_NAMESPACE = 'art';
const ID_HEX_CHARS = 24;
/** `{namespace}_{24 hex}`; the namespace may itself contain `_`, so the hex part is matched from the end. */
export const ARTIFACT_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}_[0-9a-f]{24}$/;
export const SHA256_PATTERN = /^[0-9a-f]{64}$/;

export function assertNamespace(namespace: string): string {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw errors.badRequest(
      `Invalid namespace ${JSON.stringify(namespace)}: use 1-${MAX_NAMESPACE_CHARS} characters of A-Z, a-z, 0-9, '.', '_' or '-'.`,
    );
  }
  return namespace;
}

/** The artifact id for bytes with this sha256 under a namespace. Same bytes + namespace = same id. */
export function artifactId(namespace: string, sha256: string): string {
  return `${assertNamespace(namespace)}_${sha256.slice(0, ID_HEX_CHARS)}`;
}

export function isArtifactId(value: string): boolean {
  return ARTIFACT_ID_PATTERN.test(value);
}

/** Splits an id into its namespace and hex prefix; undefined when it is not an artifact id. */
export function parseArtifactId(id: string): { namespace: string; hexPrefix: string } | undefined {
  if (!isArtifactId(id)) return undefined;
  const cut = id.length - ID_HEX_CHARS - 1;
  return { namespace: id.slice(0, cut), hexPrefix: id.slice(cut + 1) };
}

/**
 * A tool name becomes a namespace: lower-cased, other characters replaced with `-`, prefixed with the
 * MCP server's name when known (`tableau.download_workbook`).
 */
export function namespaceFromToolName(toolName: string, serverName?: string): string {
  const clean = (s: string) => s.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
  const joined = serverName ? `${clean(serverName)}.${clean(toolName)}` : clean(toolName);
  const ns = joined.slice(0, 64);
  return ns.length > 0 ? ns : DEFAULT_NAMESPACE;
}
