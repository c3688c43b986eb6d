import { sha256Hex } from '../core/hash.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { Perm } from '../core/perms.js';

const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomString(length: number, alphabet: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

/**
 * Issues an API key `ask_{id}_{secret}` for a tenant, or an operator key (`operator: true`, no
 * tenant). Only the secret's sha256 is stored; the key is shown once.
 */
export async function issueApiKey(
  repo: ArtifactRepository,
  input: { tenantId: string; perms: Perm[]; label?: string } | { operator: true; label?: string },
): Promise<{ id: string; key: string }> {
  const id = randomString(12, ALPHANUM);
  const secret = randomString(40, `${ALPHANUM}-_`);
  const who =
    'operator' in input
      ? { tenantId: '', operator: true, perms: ['read', 'write', 'admin'] as Perm[] }
      : { tenantId: input.tenantId, operator: false, perms: input.perms };
  await repo.createApiKey({
    id,
    ...who,
    label: input.label ?? null,
    createdAt: Date.now(),
    secretHash: await sha256Hex(new TextEncoder().encode(secret)),
  });
  return { id, key: `ask_${id}_${secret}` };
}
