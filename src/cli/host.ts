/** Who the CLI acts as in the audit trail. */
import { userInfo } from 'node:os';
import type { AuditActor } from '../service/audit.js';

/** The CLI acts from the host: recorded in the audit trail as the host user. */
export function hostActor(): AuditActor {
  let user = process.env.USER ?? 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the environment's USER, if any.
  }
  return { role: 'host', actorKind: 'cli', actorId: user };
}
