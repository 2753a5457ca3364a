/**
 * Token exchange (RFC 8693): the subject and actor tokens this service issued itself, verified
 * (its access tokens and ID tokens); an ID-JAG subject is id-jag.ts's. Error codes follow
 * RFC 8693 §2.2.2: an invalid or unacceptable subject or actor token is `invalid_request`.
 */
import type { JWTPayload } from 'jose';
import type { Client } from '../../db/entities.js';
import { InvalidRequest } from '../../errors.js';
import type { IdJagClaims } from '../token-exchange/id-jag.js';
import { issSubOf, type IssSubIdentifier } from '../token-exchange/subjects.js';
import type { GrantDeps } from './deps.js';

/** A verified subject: who the new token is about and what it may at most carry. */
export interface Subject {
  sub: string;
  /** Scopes the issued token may at most carry (before the requesting client's own limit). */
  scopeCeiling: string[];
  /** Seconds since the epoch after which the subject is no longer good, if it says. */
  exp?: number;
  /** The subject's token family (access tokens from a login): kept, so revoking it kills the exchange too. */
  fid?: string;
  /** The subject token's own delegation chain (RFC 8693 §4.1). */
  act?: Record<string, unknown>;
  /** ID-JAG claims when the subject is an ID-JAG. */
  idJag?: IdJagClaims;
  /** The subject's issuer and identifier there, when it is another issuer's (RFC 9493 `iss_sub`). */
  subId?: IssSubIdentifier;
  /** RFC 8693 §4.4: who may act for the subject, when the subject token says. */
  mayAct?: Record<string, unknown>;
  /** RFC 9396 authorization_details the subject token carries (an agent grant's), and that grant. */
  authorizationDetails?: Record<string, unknown>[];
  agentGrant?: { id: string; gen: number };
}

export type Role = 'subject_token' | 'actor_token';

export const asList = (aud: unknown): string[] =>
  typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
export const scopeOf = (s: unknown): string[] => (typeof s === 'string' ? s.split(' ').filter(Boolean) : []);
const actOf = (act: unknown) =>
  act && typeof act === 'object' && !Array.isArray(act) ? (act as Record<string, unknown>) : undefined;
const detailsOf = (v: unknown) =>
  Array.isArray(v) && v.every((e) => e && typeof e === 'object' && !Array.isArray(e))
    ? (v as Record<string, unknown>[])
    : undefined;

export function ownTokens(deps: GrantDeps) {
  /** An access token this service issued, in the client's tenant, not revoked. */
  const accessToken = async (token: string, client: Client, role: Role, jkt?: string): Promise<JWTPayload> => {
    let claims;
    try {
      claims = await deps.tokens.verifyAccessToken(token);
    } catch {
      throw new InvalidRequest(`The ${role} is not a valid, unexpired access token of this issuer.`);
    }
    if (claims.tenant_id !== client.tenant_id) throw new InvalidRequest(`The ${role} belongs to another tenant.`);
    // RFC 9449 §7.2: a DPoP-bound token is worth nothing without its key, here too (an exchange
    // must not turn it into an unbound one): the token request's proof must be of that key.
    const bound = claims.cnf?.jkt;
    if (bound !== undefined && bound !== jkt)
      throw new InvalidRequest(`The ${role} is DPoP-bound: the token request needs a DPoP proof of its key.`);
    if (await deps.oauth.isAccessTokenRevoked(client.tenant_id, String(claims.jti), claims.fid))
      throw new InvalidRequest(`The ${role} has been revoked.`);
    // A token issued under an agent grant acts under it no longer once the grant is revoked or
    // changed (its generation raised): refused at once, as introspection refuses it, not only
    // after the outbox job has recorded its jti (docs/agents.md, "Revocation").
    if (
      typeof claims.agent_grant_id === 'string' &&
      !(await deps.agentGrants.tokenCurrent(
        client.tenant_id,
        claims.agent_grant_id,
        Number.isSafeInteger(claims.agent_grant_gen) ? Number(claims.agent_grant_gen) : -1,
      ))
    )
      throw new InvalidRequest(`The ${role} was issued under an agent grant that was revoked or changed since.`);
    // A token outlives neither its client's active state nor its tenant (as at the bearer APIs).
    const owner = (await deps.directory.resolveClient(String(claims.client_id)))?.client;
    if (owner?.status !== 'active' || owner.tenant_id !== client.tenant_id)
      throw new InvalidRequest(`The ${role} was issued to a client that is no longer active.`);
    return claims;
  };

  /** An ID token this service issued (typ JWT, our keys), unexpired, in the client's tenant. */
  const idToken = async (token: string, client: Client, role: Role): Promise<JWTPayload> => {
    const claims = await deps.tokens.verifyIdTokenHint(token);
    if (!claims) throw new InvalidRequest(`The ${role} is not an ID token of this issuer.`);
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= Date.now())
      throw new InvalidRequest(`The ${role} has expired.`);
    if (claims.tenant_id !== client.tenant_id) throw new InvalidRequest(`The ${role} belongs to another tenant.`);
    // OIDC Core §2: an ID token is meant for its audience; only that client may present it.
    if (!asList(claims.aud).includes(client.client_id))
      throw new InvalidRequest(`The ${role} was issued to another client.`);
    return claims;
  };

  /** A user subject must still be active; a client subject (client_credentials) has no user row. */
  const requireActiveUser = async (tenantId: string, sub: string) => {
    const status = await deps.oauth.userStatus(tenantId, sub);
    // A user's id (`usr_…`) with no row is an erased user (docs/directory.md): refused as well.
    if (status === undefined ? sub.startsWith('usr_') : status !== 'active')
      throw new InvalidRequest("The subject's account is disabled.");
  };

  /** The subject of an access token of ours. */
  const accessTokenSubject = async (token: string, client: Client, jkt?: string): Promise<Subject> => {
    const c = await accessToken(token, client, 'subject_token', jkt);
    // Who may exchange it: the client it was issued to, or a resource server it is addressed
    // to (RFC 8693 §1.1 impersonation/delegation by the recipient of the token).
    const aud = asList(c.aud);
    const addressed = aud.includes(client.client_id) || client.resource_identifiers.some((r) => aud.includes(r));
    if (c.client_id !== client.client_id && !addressed)
      throw new InvalidRequest('The subject_token was neither issued to nor addressed to this client.');
    await requireActiveUser(client.tenant_id, String(c.sub));
    return {
      sub: String(c.sub),
      scopeCeiling: scopeOf(c.scope),
      exp: c.exp,
      fid: typeof c.fid === 'string' ? c.fid : undefined,
      act: actOf(c.act),
      // A token about another issuer's subject stays marked through every further exchange.
      subId: issSubOf(c),
      mayAct: actOf(c.may_act),
      authorizationDetails: detailsOf(c.authorization_details),
      ...(typeof c.agent_grant_id === 'string' && Number.isSafeInteger(c.agent_grant_gen)
        ? { agentGrant: { id: c.agent_grant_id, gen: Number(c.agent_grant_gen) } }
        : {}),
    };
  };

  /** The subject of an ID token of ours. */
  const idTokenSubject = async (token: string, client: Client): Promise<Subject> => {
    const c = await idToken(token, client, 'subject_token');
    await requireActiveUser(client.tenant_id, String(c.sub));
    // An ID token proves who the user is, not what they granted: the ceiling is what they
    // consented to for this client (first-party grants are recorded too), and openid.
    const consent = await deps.oauth.findConsent(client.tenant_id, String(c.sub), client.client_id);
    return { sub: String(c.sub), scopeCeiling: [...new Set(['openid', ...(consent?.scopes ?? [])])], exp: c.exp };
  };

  return { accessToken, idToken, accessTokenSubject, idTokenSubject, requireActiveUser };
}
