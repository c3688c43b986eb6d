/**
 * The names a host sees: `{server}__{tool}`, within `^[a-zA-Z0-9_-]{1,64}$`, which the major model
 * APIs accept for function names. A name with other characters, or a longer one, keeps a readable
 * part and ends in a short hash of the original, so two tools never share a name by accident; a
 * collision that remains is an error at start.
 */

export const HOST_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;
const SEPARATOR = '__';

/** FNV-1a (32 bit) as 8 hex digits: a stable, short suffix (not a security measure). */
function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** The host-facing name of `tool` on `server` (a config key, already within the alphabet). */
export function hostName(server: string, tool: string): string {
  const plain = `${server}${SEPARATOR}${tool}`;
  if (HOST_NAME.test(plain)) return plain;
  const suffix = `_${shortHash(`${server}\u0000${tool}`)}`;
  const readable = `${server}${SEPARATOR}${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  return `${readable.slice(0, MAX - suffix.length)}${suffix}`;
}

/** One upstream name as the host sees it. */
export interface NamedEntry {
  server: string;
  /** The upstream's own name. */
  name: string;
}

/**
 * Host name → upstream entry for many servers' names. Throws when two entries get one host name,
 * naming both.
 */
export function nameTable(entries: NamedEntry[], kind: 'tool' | 'prompt'): Map<string, NamedEntry> {
  const table = new Map<string, NamedEntry>();
  for (const entry of entries) {
    const name = hostName(entry.server, entry.name);
    const other = table.get(name);
    if (other && (other.server !== entry.server || other.name !== entry.name))
      throw new Error(
        `The ${kind}s ${JSON.stringify(other.name)} of server "${other.server}" and ${JSON.stringify(entry.name)} of server "${entry.server}" would both be called ${name}. Rename one server in the gateway config.`,
      );
    table.set(name, entry);
  }
  return table;
}
