/**
 * DPoP at the HTTP edge (RFC 9449, docs/dpop.md): reading the proof of a token request, and the
 * rules of an access token presented at this service's own resources (/userinfo, the account
 * API, the admin API), which every bearer middleware applies the same way:
 *
 * - a token bound to a key (`cnf.jkt`) is accepted only as `Authorization: DPoP <token>` with a
 *   proof of that key for this request carrying `ath` (§7.1); as `Bearer` it is refused with
 *   401 invalid_token (§7.2: the binding would be worthless if a stolen token still worked);
 * - an unbound token presented with the DPoP scheme is refused too (it proves nothing);
 * - a tenant that requires nonces gets `DPoP-Nonce` on the answer, and a proof without the
 *   current nonce answers 401 with `WWW-Authenticate: DPoP error="use_dpop_nonce"` (§9).
 */
import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import { ApiError, OAuthError } from '../shared/errors.js';
import { DPOP_ALGORITHMS, DpopProofError, type VerifiedProof } from '../shared/services/dpop/index.js';
import type { AccessTokenClaims } from '../shared/services/tokens.js';
import type { AppDeps } from './context.js';
import type { HeaderParameter } from './openapi.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Ctx = ParameterizedContext<any>;

/** The `DPoP` request header, as routes declare it (OpenAPI `in: header`). */
export const DPOP_HEADER: HeaderParameter = {
  name: 'DPoP',
  description: 'A DPoP proof JWT (RFC 9449 §4): binds the tokens issued to its key, or proves the key of a bound token',
  required: false,
  schema: z.string().max(8192),
};

/** An access token as presented in the Authorization header: RFC 6750 §2.1 or RFC 9449 §7.1. */
export interface PresentedToken {
  scheme: 'Bearer' | 'DPoP';
  token: string;
}

/** The Authorization header's access token, Bearer or DPoP; undefined for anything else. */
export function presentedToken(ctx: Ctx): PresentedToken | undefined {
  const m = /^(Bearer|DPoP)\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(ctx.get('Authorization'));
  if (!m) return undefined;
  return { scheme: m[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: m[2] };
}

/**
 * The DPoP challenge of RFC 9449 §7.1, with the algorithms a proof may use. The description
 * stays in the body (a header value is Latin-1 at best, and the body says the same).
 */
export function dpopChallenge(error?: string): string {
  return ['DPoP realm="iam"', error ? `error="${error}"` : '', `algs="${DPOP_ALGORITHMS.join(' ')}"`]
    .filter(Boolean)
    .join(', ');
}

/** Sets DPoP-Nonce on the answer when the tenant requires server nonces (§8, §9). */
async function offerNonce(deps: AppDeps, ctx: Ctx, tenantId: string): Promise<boolean> {
  const required = (await deps.dpop.policy(tenantId)).requireNonce === true;
  if (required) ctx.set('DPoP-Nonce', deps.dpop.nonces.current());
  return required;
}

/**
 * The token request's proof (§5): checked against this request's method and path at this
 * issuer (POST /token; POST /par too, §10.1), its `jti` spent; undefined when the request has
 * none and the tenant does not require one. Refusals are
 * the OAuth errors of §5 and §8 (400 `invalid_dpop_proof`, 400 `use_dpop_nonce` with a fresh
 * DPoP-Nonce).
 */
export async function tokenRequestProof(
  deps: AppDeps,
  ctx: Ctx,
  tenantId: string,
): Promise<{ jkt: string } | undefined> {
  const nonce = await offerNonce(deps, ctx, tenantId);
  const header = ctx.req.headers.dpop;
  if (header === undefined) {
    if ((await deps.dpop.policy(tenantId)).requireDpop !== true) return undefined;
    const err = new OAuthError(
      'invalid_dpop_proof',
      "This tenant's tokens are DPoP-bound: send a DPoP proof (RFC 9449 §5).",
    );
    if (nonce) err.headers['DPoP-Nonce'] = deps.dpop.nonces.current();
    throw err;
  }
  try {
    const proof = await deps.dpop.check({ tenantId, header, method: ctx.method, path: ctx.path });
    return { jkt: proof.jkt };
  } catch (e) {
    if (!(e instanceof DpopProofError)) throw e;
    const err = new OAuthError(e.code, e.message);
    if (nonce) err.headers['DPoP-Nonce'] = deps.dpop.nonces.current();
    throw err;
  }
}

/**
 * The binding rules of an access token presented at one of this service's resources (see the
 * top of this file), once the token itself verified: resolves when the presentation is good,
 * throws a 401 ApiError with its challenge set otherwise.
 */
export async function checkPresentation(
  deps: AppDeps,
  ctx: Ctx,
  presented: PresentedToken,
  claims: AccessTokenClaims,
): Promise<VerifiedProof | undefined> {
  const jkt = typeof claims.cnf?.jkt === 'string' ? claims.cnf.jkt : undefined;
  const refuse = (error: string, message: string) => {
    ctx.set('WWW-Authenticate', dpopChallenge(error));
    return new ApiError(401, error, message);
  };
  if (!jkt) {
    if (presented.scheme === 'DPoP')
      throw refuse('invalid_token', 'The access token is not DPoP-bound; present it as Bearer.');
    return undefined;
  }
  if (presented.scheme !== 'DPoP')
    throw refuse(
      'invalid_token',
      'The access token is DPoP-bound: present it with the DPoP scheme and a proof (RFC 9449 §7.1).',
    );
  const tenantId = String(claims.tenant_id);
  await offerNonce(deps, ctx, tenantId);
  let proof: VerifiedProof;
  try {
    proof = await deps.dpop.check({
      tenantId,
      header: ctx.req.headers.dpop,
      method: ctx.method,
      path: ctx.path,
      accessToken: presented.token,
    });
  } catch (e) {
    if (e instanceof DpopProofError) throw refuse(e.code, e.message);
    throw e;
  }
  // §4.3 check 12: the proof's key is the one the token is bound to.
  if (proof.jkt !== jkt)
    throw refuse('invalid_dpop_proof', 'The DPoP proof is signed with another key than the token is bound to.');
  return proof;
}
