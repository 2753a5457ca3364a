/**
 * The OpenID Connect standard claims (Core §5.1) a token or UserInfo carries, by scope
 * (Core §5.4). One function for the ID token and UserInfo, so the two never disagree.
 * docs/claims.md, "Standard claims".
 */
import type { JsonObject } from '../db/entities.js';
import { OPTIONAL_CLAIM_SCOPES, SCOPE_CLAIMS, type OptionalClaimScope } from '../schemas/standard-claims.js';

export { SCOPE_CLAIMS };

/** What a user record gives the claims: its columns and the `standard_claims` JSON. */
export interface ClaimsUser {
  email: string;
  name: string;
  standard_claims?: JsonObject | string | null;
  /** users.email_verified (migration 0032): 1 or 0 as the drivers read it. */
  email_verified?: number | boolean | null;
  updated_at?: number | string | null;
}

/**
 * Whether the record says the user's address is verified. Fails closed: a read that did not
 * select the column says false, never a verification nobody recorded.
 */
export const emailVerified = (user: Pick<ClaimsUser, 'email_verified'>): boolean =>
  user.email_verified === true || Number(user.email_verified) === 1;

const parseStored = (p: ClaimsUser['standard_claims']): JsonObject =>
  typeof p === 'string' ? (JSON.parse(p) as JsonObject) : (p ?? {});

/** The tenant settings section that lists the optional scopes a tenant offers. */
export const STANDARD_CLAIMS_SECTION = 'standardClaims';

/** The optional claim scopes (`address`, `phone`) a tenant's settings document turns on. */
export function enabledClaimScopes(settings: JsonObject | null | undefined): OptionalClaimScope[] {
  const raw = (settings?.[STANDARD_CLAIMS_SECTION] as { scopes?: unknown } | undefined)?.scopes;
  return Array.isArray(raw) ? OPTIONAL_CLAIM_SCOPES.filter((s) => raw.includes(s)) : [];
}

/** Whether `scope` is one of the optional claim scopes that a tenant must turn on. */
export const isOptionalClaimScope = (scope: string): scope is OptionalClaimScope =>
  (OPTIONAL_CLAIM_SCOPES as readonly string[]).includes(scope);

/**
 * The standard claims `scopes` release for `user` (OIDC Core §5.4), each only when the user has
 * a value (§5.3.2: a claim without a value is omitted, not null). `offered`: the optional scopes
 * the tenant turns on; `address` and `phone` release nothing unless offered, so turning a scope
 * off stops its claims at once, also for grants given before.
 *
 * `email_verified` is what the user record says (`emailVerified`): an upstream provider that did
 * not verify the address makes it false until an email code proves it.
 */
export function standardClaims(
  user: ClaimsUser,
  scopes: readonly string[],
  offered: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const stored = parseStored(user.standard_claims);
  const put = (claim: string) => {
    if (Object.hasOwn(stored, claim) && stored[claim] !== null && stored[claim] !== undefined)
      out[claim] = stored[claim];
  };
  if (scopes.includes('profile')) {
    out.name = user.name;
    for (const c of SCOPE_CLAIMS.profile) if (c !== 'name' && c !== 'updated_at') put(c);
    // §5.1: seconds since the epoch.
    if (user.updated_at !== undefined && user.updated_at !== null)
      out.updated_at = Math.floor(Number(user.updated_at) / 1000);
  }
  if (scopes.includes('email')) Object.assign(out, { email: user.email, email_verified: emailVerified(user) });
  if (scopes.includes('address') && offered.includes('address')) put('address');
  if (scopes.includes('phone') && offered.includes('phone')) {
    put('phone_number');
    if (out.phone_number !== undefined) out.phone_number_verified = stored.phone_number_verified === true;
  }
  return out;
}
