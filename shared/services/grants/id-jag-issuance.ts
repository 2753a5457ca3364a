/**
 * The service as the enterprise IdP (draft-ietf-oauth-identity-assertion-authz-grant §4.3): a
 * token exchange with `requested_token_type=urn:ietf:params:oauth:token-type:id-jag` trades an
 * ID token of this tenant's user, issued to the calling client, for an Identity Assertion JWT
 * Authorization Grant addressed to another authorization server the tenant trusts. What may be
 * asked for is the tenant's `tokenExchange.idJagIssuance` policy (issuance-settings.ts);
 * docs/token-exchange.md, "Issuing ID-JAGs", has the rules and the error codes.
 */
import type { Client } from '../../db/entities.js';
import type { Db } from '../../db/index.js';
import { InvalidRequest, InvalidScope, InvalidTarget, UnauthorizedClient } from '../../errors.js';
import { Lookups, TenantScope } from '../../repositories/index.js';
import { audit } from '../audit.js';
import { tokenHash } from '../auth/pkce.js';
import type { IssuanceClientRule, TrustedAuthorizationServer } from '../token-exchange/issuance-settings.js';
import type { TokenExchangeSettings } from '../token-exchange/settings.js';
import { TOKEN_TYPE_ID_TOKEN, TOKEN_TYPE_REFRESH_TOKEN } from '../token-exchange/token-types.js';
import type { IssuedToken } from '../tokens.js';
import type { GrantDeps } from './deps.js';
import { ownTokens } from './token-exchange-subjects.js';

/** What an issuance request settled on, before anything is signed. */
export interface IssuancePlan {
  sub: string;
  server: TrustedAuthorizationServer;
  rule: IssuanceClientRule;
  scope?: string[];
  resources: string[];
  /** Authentication facts of the ID token the draft lets the assertion carry (§3: auth_time, acr, amr). */
  auth: Record<string, unknown>;
}

interface IssuanceRequest {
  client: Client;
  settings: TokenExchangeSettings;
  subjectToken: string;
  subjectTokenType: string;
  actorToken?: string;
  requestedScope?: string[];
  resources: string[];
  audiences: string[];
}

export function idJagIssuance(deps: GrantDeps) {
  const own = ownTokens(deps);

  /** Policy on, subject type, no actor: refused before any token is verified. */
  const checkRequest = (x: IssuanceRequest): void => {
    if (!x.settings.idJagIssuance.enabled)
      throw new InvalidRequest('This tenant does not issue ID-JAGs (requested_token_type id-jag).');
    if (x.subjectTokenType !== TOKEN_TYPE_ID_TOKEN && x.subjectTokenType !== TOKEN_TYPE_REFRESH_TOKEN)
      throw new InvalidRequest(
        `An ID-JAG is issued for an ID token or a refresh token: subject_token_type must be ${TOKEN_TYPE_ID_TOKEN} ` +
          `or ${TOKEN_TYPE_REFRESH_TOKEN}.`,
      );
    // The assertion is about the signed-in user alone (draft §3 has no actor).
    if (x.actorToken) throw new InvalidRequest('actor_token is not accepted when requesting an ID-JAG.');
  };

  /**
   * The subject, target, client rule, scope and resources. RFC 8693 §2.2.2: an audience the
   * tenant does not trust is `invalid_target`; a trusted target this client may not ask for is
   * `unauthorized_client`; scope beyond the rule is `invalid_scope`.
   */
  const plan = async (x: IssuanceRequest): Promise<IssuancePlan> => {
    const c: Record<string, unknown> =
      x.subjectTokenType === TOKEN_TYPE_REFRESH_TOKEN
        ? { sub: await refreshTokenUser(x.subjectToken, x.client) }
        : await own.idToken(x.subjectToken, x.client, 'subject_token');
    const sub = String(c.sub);
    await own.requireActiveUser(x.client.tenant_id, sub);
    if (x.audiences.length !== 1)
      throw new InvalidRequest('An ID-JAG needs exactly one audience: the issuer of the target authorization server.');
    const [target] = x.audiences as [string];
    const server = x.settings.idJagIssuance.trustedAuthorizationServers.find((s) => s.issuer === target);
    if (!server) throw new InvalidTarget(`${target} is not an authorization server this tenant issues ID-JAGs for.`);
    const rule = server.clients.find((r) => r.clientId === x.client.client_id);
    if (!rule) throw new UnauthorizedClient(`This client may not request ID-JAGs for ${target}.`);
    for (const r of x.resources) {
      if (!URL.canParse(r) || r.includes('#'))
        throw new InvalidTarget(`resource ${r} is not an absolute URI without a fragment.`);
    }
    const resources = [...new Set(x.resources)];
    if (rule.resources) {
      const outside = resources.filter((r) => !rule.resources!.includes(r));
      if (outside.length) throw new InvalidTarget(`resource not allowed for ${target}: ${outside.join(' ')}`);
    }
    if (x.requestedScope) {
      const outside = x.requestedScope.filter((s) => !rule.scopes.includes(s));
      if (outside.length) throw new InvalidScope(`Scope not allowed for ${target}: ${outside.join(' ')}`);
    }
    const auth: Record<string, unknown> = {};
    for (const k of ['auth_time', 'acr', 'amr'] as const) if (c[k] !== undefined) auth[k] = c[k];
    return { sub, server, rule, scope: x.requestedScope?.length ? x.requestedScope : undefined, resources, auth };
  };

  /**
   * The user of a refresh token the caller holds: current (not consumed, its family not revoked,
   * unexpired), of the caller's tenant and issued to the caller. It is read, not rotated: the
   * request proves who the user is and spends nothing (docs/token-exchange.md).
   */
  const refreshTokenUser = async (token: string, client: Client): Promise<string> => {
    const r = await new Lookups(deps.ds).refreshTokenByHash(tokenHash(token));
    if (!r || r.tenant_id !== client.tenant_id)
      throw new InvalidRequest('The subject_token is not a refresh token of this tenant.');
    const family = await new TenantScope(deps.ds, r.tenant_id).tokens.family(r.family_id);
    if (!family || family.client_id !== client.client_id)
      throw new InvalidRequest('The subject_token was issued to another client.');
    if (r.consumed_at !== null || family.revoked_at !== null || r.expires_at <= Date.now())
      throw new InvalidRequest('The subject_token is no longer a current refresh token.');
    if (!family.user_id) throw new InvalidRequest('The subject_token is not about a user.');
    return family.user_id;
  };

  /** Signs the assertion and audits its issuance (no token value in the event). */
  const issue = async (client: Client, p: IssuancePlan, lifetime: number, db: Db): Promise<IssuedToken> => {
    const issued = await deps.tokens.signIdJag(
      {
        sub: p.sub,
        aud: p.server.issuer,
        client_id: p.rule.targetClientId,
        ...(p.server.audTenant ? { aud_tenant: p.server.audTenant } : {}),
        ...(p.resources.length ? { resource: p.resources.length === 1 ? p.resources[0] : p.resources } : {}),
        ...(p.scope ? { scope: p.scope.join(' ') } : {}),
        ...p.auth,
      },
      lifetime,
    );
    await audit(
      db,
      { type: 'client', id: client.client_id },
      {
        tenantId: client.tenant_id,
        action: 'token.id_jag.issue',
        targetType: 'user',
        targetId: p.sub,
        summary: {
          jti: issued.jti,
          client_id: client.client_id,
          aud: p.server.issuer,
          target_client_id: p.rule.targetClientId,
          ...(p.server.audTenant ? { aud_tenant: p.server.audTenant } : {}),
          scope: p.scope?.join(' ') ?? null,
          resource: p.resources,
          exp: issued.claims.exp,
        },
      },
    );
    return issued;
  };

  return { checkRequest, plan, issue };
}
