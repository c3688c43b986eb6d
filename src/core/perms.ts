/** What a token or API key may do: read, write, or administer its tenant. */
export const PERMS = ['read', 'write', 'admin'] as const;
export type Perm = (typeof PERMS)[number];
