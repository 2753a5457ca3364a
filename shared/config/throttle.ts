/** The sign-in and client-authentication budgets (IAM_THROTTLE_*; docs/security.md). */
import { intVar } from './vars.js';

/**
 * The throttling budgets, each `IAM_THROTTLE_*` overridable. Windows are seconds. A budget
 * of 0 turns that budget off (for a test or an operator who throttles at a proxy instead).
 */
export interface ThrottleConfig {
  /** Failed code checks per address across transactions before the address locks. */
  addressFailures: number;
  /** Window of those failures. */
  addressFailureWindowSeconds: number;
  /** First lock; each further lock within a day doubles it, up to a day. */
  addressLockSeconds: number;
  /** Codes one address may be sent per hour. */
  addressMailPerHour: number;
  /** Code sends per IP per window. */
  ipSends: number;
  /** Code checks per IP per window. */
  ipVerifies: number;
  /** Login form posts (/login/email-code, /login/verify) per IP per window. */
  ipFormPosts: number;
  /** Window of the per-IP budgets. */
  ipWindowSeconds: number;
  /** Code sends per tenant per minute. */
  tenantSendsPerMinute: number;
  /** Code checks per tenant per minute. */
  tenantVerifiesPerMinute: number;
  /** Failed client authentications per client per window (/token, /revoke, /introspect). */
  clientAuthFailures: number;
  /** Failed client authentications per IP per window. */
  clientAuthIpFailures: number;
  /** Window of the client-authentication budgets, and how long a spent one blocks. */
  clientAuthWindowSeconds: number;
}

/** The IAM_THROTTLE_* variables; the defaults and their arithmetic are in docs/security.md. */
export function throttleConfig(env: NodeJS.ProcessEnv): ThrottleConfig {
  const v = (name: string, def: number, max: number, min = 0) => intVar(env, `IAM_THROTTLE_${name}`, def, min, max);
  return {
    addressFailures: v('ADDRESS_FAILURES', 10, 1000),
    addressFailureWindowSeconds: v('ADDRESS_FAILURE_WINDOW_SECONDS', 86_400, 7 * 86_400, 1),
    addressLockSeconds: v('ADDRESS_LOCK_SECONDS', 900, 86_400, 1),
    addressMailPerHour: v('ADDRESS_MAIL_PER_HOUR', 10, 10_000_000),
    ipSends: v('IP_SENDS', 60, 10_000_000),
    ipVerifies: v('IP_VERIFIES', 120, 10_000_000),
    ipFormPosts: v('IP_FORM_POSTS', 120, 10_000_000),
    ipWindowSeconds: v('IP_WINDOW_SECONDS', 600, 86_400, 1),
    tenantSendsPerMinute: v('TENANT_SENDS_PER_MINUTE', 600, 10_000_000),
    tenantVerifiesPerMinute: v('TENANT_VERIFIES_PER_MINUTE', 1200, 10_000_000),
    clientAuthFailures: v('CLIENT_AUTH_FAILURES', 100, 10_000_000),
    clientAuthIpFailures: v('CLIENT_AUTH_IP_FAILURES', 30, 10_000_000),
    clientAuthWindowSeconds: v('CLIENT_AUTH_WINDOW_SECONDS', 900, 86_400, 1),
  };
}
