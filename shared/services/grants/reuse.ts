/**
 * A replayed code or refresh token (RFC 6749 §4.1.2, RFC 9700 §4.14.2): the grant's transaction
 * rolled back, so the family is revoked here in a statement of its own, and the event logged.
 */
import { ReuseDetected } from '../auth/oauth.js';
import type { GrantDeps } from './deps.js';
import type { GrantLog } from './grant.js';

export async function revokeOnReuse(deps: GrantDeps, e: unknown, log: GrantLog): Promise<void> {
  if (!(e instanceof ReuseDetected)) return;
  await deps.oauth.revokeFamily(e.tenantId, e.familyId, e.reason);
  log.warn({ familyId: e.familyId, reason: e.reason }, 'token family revoked on reuse');
}
