import { basePolicy, type Config, policiesOf, readTenantPolicies } from '../core/config.js';
import type { Policy, TenantPolicies } from '../core/policy.js';
import { type KeySources, type ResolvedKeys, resolveKeys } from './keys.js';

/** What a configuration means once read: keys in force, each tenant's policy, and what overrides them. */
export interface ResolvedSettings {
  keys: ResolvedKeys;
  /** The policy of every tenant: the base, with that tenant's overrides. */
  policies: (tenantId: string) => Policy;
  base: Policy;
  tenantPolicies: TenantPolicies;
  /** Tenants whose policy differs from the base (retention scans them by their own limits). */
  overriddenTenants: string[];
}

/**
 * Keys and policies from configuration, by the same rules on every runtime: the one place those
 * rules are applied. `sources` says how this runtime finds keys (a dev secret file on Node, none on
 * Workers) and whether public keys come from elsewhere.
 */
export async function resolveSettings(config: Config, sources: KeySources): Promise<ResolvedSettings> {
  return { keys: await resolveKeys(config, sources), ...policySettings(config) };
}

/** The policy half of resolveSettings, for tools that sign nothing (the CLI's ops commands). */
export function policySettings(config: Config): Omit<ResolvedSettings, 'keys'> {
  const tenantPolicies = readTenantPolicies(config.tenantPolicies);
  return {
    policies: policiesOf(config),
    base: basePolicy(config),
    tenantPolicies,
    overriddenTenants: Object.keys(tenantPolicies),
  };
}
