import { newId } from '../../crypto.js';
import { ApiError } from '../../errors.js';
import type { TenantScope } from '../../repositories/index.js';

/** Where a sign-in request came from, as far as the service can tell. */
export interface RequestMeta {
  ip?: string;
  userAgent?: string;
}

/** The events of the authentication history. */
export type AuthEvent =
  | 'email_code_sent'
  | 'email_code_verify'
  | 'session_created'
  | 'token'
  | 'refresh'
  | 'logout'
  /** A sign-in by another method than the email code (passkey, upstream, artifact), refused. */
  | 'sign_in';

/**
 * The refusal of a disabled user's sign-in, whatever the method (docs/errors.md): 403
 * `user_disabled`. Said only once the user proved who they are (the right code, a valid
 * passkey), so it tells nothing to someone who did not.
 */
export const userDisabled = (): ApiError =>
  new ApiError(403, 'user_disabled', 'This account is disabled. Ask your administrator to enable it.');

/**
 * Records a login attempt and its outcome, for the user's own history and for support, in the
 * scope's tenant (and its transaction, when the scope is made in one).
 */
export async function recordAuthEvent(
  scope: TenantScope,
  e: {
    userId: string | null;
    event: AuthEvent;
    outcome: 'success' | 'failure';
    reason?: string;
    clientId?: string;
    meta?: RequestMeta;
  },
): Promise<void> {
  await scope.authHistory.append({
    id: newId('ah'),
    user_id: e.userId,
    event: e.event,
    outcome: e.outcome,
    reason: e.reason ?? null,
    client_id: e.clientId ?? null,
    ip: e.meta?.ip?.slice(0, 64) ?? null,
    user_agent: e.meta?.userAgent?.slice(0, 512) ?? null,
    created_at: Date.now(),
  });
}
