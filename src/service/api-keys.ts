import { sha256Hex } from '../core/hash.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { Perm } from '../http/tokens.js';

const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomString(length: number, alphabet: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

/**
 * Issues an API key `ask_{id}_{secret}` for a tenant. Only the secret's sha256 is stored; the key is
 * shown once.
 */
export async function issueApiKey(repo: ArtifactRepository, input: { tenantId: string; perms: Perm[]; label?: string }): Promise<{ id: string; key: string }> {
  const id = randomString(12, ALPHANUM);
  const secret = randomString(40, `${ALPHANUM}-_`);
  await repo.createApiKey({ id, tenantId: input.tenantId, perms: input.perms, label: input.label ?? null, createdAt: Date.now(), secretHash: await sha256Hex(new TextEncoder().encode(secret)) });
  return { id, key: `ask_${id}_${secret}` };
}
