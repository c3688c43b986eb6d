import { errors } from './errors.js';

/** An HMAC key for download links; several at once so keys rotate (the first one signs). */
export interface UrlSigningKey {
  kid: string;
  secret: string;
}

/** What a proxy download link grants: these bytes, in this tenant, shown this way, until then. */
export interface SignedDownload {
  tenantId: string;
  artifactId: string;
  /** Unix seconds. */
  expiresAt: number;
  disposition: 'inline' | 'attachment';
}

export interface UrlSigner {
  /** The query string (without "?") of a link for `d`. */
  sign(d: SignedDownload): Promise<string>;
  /**
   * Checks a link's query against the artifact id of its path. Throws forbidden (403) when it is
   * expired, tampered with, signed by an unknown key, or made for another id, tenant or disposition.
   */
  verify(artifactId: string, query: URLSearchParams, nowMs: number): Promise<SignedDownload>;
}

const encoder = new TextEncoder();

/** JSON keeps the signed fields unambiguous whatever characters a tenant id holds. */
const message = (d: SignedDownload) =>
  encoder.encode(JSON.stringify(['artifact-store download v1', d.tenantId, d.artifactId, d.expiresAt, d.disposition]));

function toBase64Url(bytes: ArrayBuffer): string {
  let bin = '';
  for (const b of new Uint8Array(bytes)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(s: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(s)) return null; // 32 bytes of HMAC-SHA256
  const bytes = Uint8Array.from(atob(`${s.replace(/-/g, '+').replace(/_/g, '/')}=`), (c) => c.charCodeAt(0));
  // The last character carries 2 unused bits: only the canonical spelling is accepted, so one
  // signature has exactly one valid link.
  return toBase64Url(bytes.buffer) === s ? bytes : null;
}

/** HMAC-SHA256 link signing with WebCrypto (Node, browsers, Workers). */
export function createUrlSigner(keys: UrlSigningKey[]): UrlSigner {
  if (keys.length === 0) throw new Error('createUrlSigner needs at least one key');
  const imported = new Map(
    keys.map((k) => [
      k.kid,
      crypto.subtle.importKey('raw', encoder.encode(k.secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
        'sign',
        'verify',
      ]),
    ]),
  );
  const signing = keys[0]!;
  const refuse = (why: string) =>
    errors.forbidden(`This download link is not valid: ${why}. Ask the application for a new link.`);

  return {
    async sign(d) {
      const sig = await crypto.subtle.sign('HMAC', await imported.get(signing.kid)!, message(d));
      return new URLSearchParams({
        tenant: d.tenantId,
        expires: String(d.expiresAt),
        disposition: d.disposition,
        kid: signing.kid,
        signature: toBase64Url(sig),
      }).toString();
    },

    async verify(artifactId, query, nowMs) {
      const tenantId = query.get('tenant');
      const expires = query.get('expires');
      const disposition = query.get('disposition');
      const kid = query.get('kid');
      const signature = fromBase64Url(query.get('signature') ?? '');
      if (
        !tenantId ||
        !expires ||
        !/^\d{1,12}$/.test(expires) ||
        (disposition !== 'inline' && disposition !== 'attachment') ||
        !kid ||
        !signature
      ) {
        throw refuse('it is incomplete (tenant, expires, disposition, kid and signature are all required)');
      }
      const key = imported.get(kid);
      if (!key) throw refuse(`it was signed with key "${kid}", which this service no longer accepts`);
      const d: SignedDownload = { tenantId, artifactId, expiresAt: Number(expires), disposition };
      if (!(await crypto.subtle.verify('HMAC', await key, signature, message(d))))
        throw refuse('the signature does not match');
      // Checked after the signature, so the message never tells a forger anything about a real link.
      if (d.expiresAt * 1000 <= nowMs) throw refuse(`it expired at ${new Date(d.expiresAt * 1000).toISOString()}`);
      return d;
    },
  };
}

/**
 * Link keys derived from the JWT secrets when none are configured: the same secret material, but a
 * link signature can never be replayed as a token signature (or the reverse).
 */
export async function deriveUrlSigningKeys(jwtSecrets: UrlSigningKey[]): Promise<UrlSigningKey[]> {
  const out: UrlSigningKey[] = [];
  for (const k of jwtSecrets) {
    const key = await crypto.subtle.importKey(
      'raw',
      encoder.encode(k.secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const derived = await crypto.subtle.sign('HMAC', key, encoder.encode('artifact-store download link key v1'));
    out.push({ kid: `jwt-${k.kid}`, secret: toBase64Url(derived) });
  }
  return out;
}
