import { newId } from '../../crypto.js';
import { ApiError, OAuthError } from '../../errors.js';
import type { TenantScope } from '../../repositories/index.js';

/** Where a sign-in request came from, as far as the service can tell. */
export interface RequestMeta {
  ip?: string;
  userAgent?: string;
}

/**
 * The events that are sign-in attempts, each naming its method: one row per attempt, success
 * or failure (docs/directory.md, "Sign-in history"). The method needs no column of its own.
 */
export const SIGN_IN_EVENTS = {
  email_code_verify: 'email_code',
  passkey_verify: 'passkey',
  upstream_verify: 'upstream',
  artifact_redeem: 'artifact',
} as const;
export type SignInEvent = keyof typeof SIGN_IN_EVENTS;
export type SignInMethodName = (typeof SIGN_IN_EVENTS)[SignInEvent];
export const SIGN_IN_METHODS = Object.values(SIGN_IN_EVENTS) as SignInMethodName[];

/** The events of the authentication history: the sign-in attempts, and what surrounds them. */
export type AuthEvent = SignInEvent | 'email_code_sent' | 'session_created' | 'token' | 'refresh' | 'logout';

/**
 * The stable reasons of a failed sign-in (docs/directory.md lists and explains each). Never the
 * code or the assertion itself.
 */
export const SIGN_IN_FAILURE_REASONS = [
  // email code
  'wrong_code',
  'code_expired',
  'no_code',
  'client_mismatch',
  'attempts_exhausted',
  'already_used',
  'address_locked',
  'throttled',
  'no_account',
  'user_disabled',
  // passkey
  'challenge_invalid',
  'assertion_invalid',
  'unknown_credential',
  'user_handle_mismatch',
  'signature_invalid',
  'counter_regression',
  'concurrent_use',
  // upstream provider
  'provider_unavailable',
  'upstream_error',
  'upstream_response_invalid',
  'account_mismatch',
  'account_exists',
  'email_not_verified',
  // any method
  'request_already_used',
  'session_ended',
  'refused',
] as const;
export type SignInFailureReason = (typeof SIGN_IN_FAILURE_REASONS)[number];

/** What a refusal says for the history: its stable reason and, when known, the account it concerns. */
export interface SignInFailure {
  reason: SignInFailureReason;
  userId?: string | null;
}

const FAILURE = Symbol('signInFailure');

/**
 * Marks a refusal with its history reason (and the account, when the method knows it), without
 * changing the error's class, status or body: the reason is for the history only.
 */
export function withReason<E extends Error>(e: E, reason: SignInFailureReason, userId?: string | null): E {
  (e as E & { [FAILURE]?: SignInFailure })[FAILURE] = { reason, userId };
  return e;
}

/**
 * The history's reason of an error a sign-in method or the sign-in service threw; undefined for
 * an error that is not a refusal (a database failure: nothing is recorded, the 500 is logged).
 */
export function failureOf(e: unknown): SignInFailure | undefined {
  if (!(e instanceof Error)) return undefined;
  const marked = (e as Error & { [FAILURE]?: SignInFailure })[FAILURE];
  if (marked) return marked;
  // The upstream broker's refusals carry their own code (broker.ts, UpstreamLoginFailure).
  const failure = (e as Error & { failure?: unknown }).failure;
  if (e.name === 'UpstreamLoginError' && typeof failure === 'string') {
    if (failure === 'account_disabled') return { reason: 'user_disabled' };
    if (failure === 'state_invalid' || failure === 'browser_mismatch') return { reason: 'request_already_used' };
    return {
      reason: (SIGN_IN_FAILURE_REASONS as readonly string[]).includes(failure)
        ? (failure as SignInFailureReason)
        : 'refused',
    };
  }
  if (e instanceof ApiError) {
    if (e.error === 'user_disabled') return { reason: 'user_disabled' };
    if (e.status === 429) return { reason: 'throttled' };
    if (e.status >= 500) return undefined;
    return { reason: 'refused' };
  }
  if (e instanceof OAuthError) return { reason: 'refused' };
  return undefined;
}

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
