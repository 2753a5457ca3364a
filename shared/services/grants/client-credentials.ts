/**
 * The client_credentials grant (RFC 6749 §4.4):
 *   checkClient → resolveScope → resolveAudience → narrowScope → readAgentGrant
 *   | (one transaction, when an agent grant is named) bindAgentGrant → issue → recordAgentToken
 * An agent acting under an agent grant names it (docs/agents.md, "Tokens"): the token carries
 * the grant's id and generation, and is recorded as one of the grant's token families, in the
 * transaction that read the grant (its row locked on MySQL), so a PATCH that raises the
 * generation either waits for the record or is seen by the read. A plain client token records
 * nothing and opens no transaction.
 */
import type { Tx } from '../../db/index.js';
import { InvalidGrant, InvalidScope, InvalidTarget, UnauthorizedClient } from '../../errors.js';
import { ACCESS_TOKEN_TTL_S } from '../auth/policy.js';
import { targetsOf } from '../rbac-tokens.js';
import { resourceRefusal } from '../resource-indicators.js';
import { requestedResources } from './user-tokens.js';
import type { IssuedToken } from '../tokens.js';
import type { GrantDeps } from './deps.js';
import type { Grant, IssueStep, Step, TokenRequest } from './grant.js';

interface State extends TokenRequest {
  scope: string[];
  audience: string[];
  /** The resources the token is for (RFC 8707): the requested ones, else the client's audiences. */
  targets: string[];
  grantId?: string;
  bound?: { generation: number; claims: Record<string, unknown> };
  issued: IssuedToken;
}

export function clientCredentialsGrant(deps: GrantDeps): Grant<State> {
  const checkClient: Step<State> = (s) => {
    // RFC 6749 §4.4: only confidential clients.
    if (s.client.client_type !== 'confidential' || !s.client.grant_types.includes('client_credentials'))
      throw new UnauthorizedClient('This client may not use the client_credentials grant.');
  };

  const resolveScope: Step<State> = (s) => {
    const granted = s.params.scope() ?? s.client.scopes.filter((x) => x !== 'openid');
    const outside = granted.filter((x) => !s.client.scopes.includes(x));
    if (outside.length) throw new InvalidScope(`Scope not allowed for this client: ${outside.join(' ')}`);
    s.scope = granted;
  };

  // RFC 8707 §2: the resources pass the one rule (resource-indicators.ts), and the token is
  // for exactly them. With none named: the client's audiences, else this issuer; the issuer is
  // added then, as ever (an admin client's token is for the admin API), never to named resources.
  const resolveAudience: Step<State> = async (s) => {
    const resource = requestedResources(s.params);
    const refusal = await resourceRefusal(deps.ds, s.client, resource, deps.issuer);
    if (refusal) throw new InvalidTarget(refusal);
    s.targets = targetsOf(s.client, resource);
    if (resource.length) {
      s.audience = resource;
      return;
    }
    const audience = s.client.audiences.length ? s.client.audiences : [deps.issuer];
    s.audience = audience.includes(deps.issuer) ? audience : [...audience, deps.issuer];
  };

  // Machine-to-machine RBAC (docs/rbac.md): a governed scope is granted only when a role
  // assigned to the client holds it for one of the targets; left out of `scope` otherwise
  // (RFC 6749 §3.3). Other scopes, the admin scopes among them, are decided above as ever.
  const narrowScope: Step<State> = async (s) => {
    const principal = { type: 'client' as const, id: s.client.client_id };
    s.scope = await deps.rbacTokens.grantedScope(s.client.tenant_id, principal, s.scope, s.targets);
  };
  const readAgentGrant: Step<State> = (s) => {
    s.grantId = s.params.single('agent_grant_id');
  };

  // Only with an agent grant, so `db` is the grant's transaction.
  const bindAgentGrant: IssueStep<State> = async (s, db) => {
    if (s.grantId === undefined) return;
    const bound = await deps.agentGrants.bindToken(s.client.tenant_id, s.client.client_id, s.grantId, db as Tx);
    if (!bound.ok) throw new InvalidGrant(bound.reason);
    s.bound = bound;
  };

  const issue: IssueStep<State> = async (s) => {
    s.issued = await deps.tokens.issueAccessToken({
      sub: s.client.client_id,
      clientId: s.client.client_id,
      tenantId: s.client.tenant_id,
      scope: s.scope,
      audience: s.audience,
      ttlSeconds: ACCESS_TOKEN_TTL_S,
      ...(s.bound ? { extra: s.bound.claims } : {}),
      alg: s.client.access_token_signed_response_alg,
      jkt: s.dpop?.jkt,
    });
  };

  const recordAgentToken: IssueStep<State> = async (s, db) => {
    if (!s.bound) return;
    await deps.agentGrants.recordToken(
      s.client.tenant_id,
      {
        jti: s.issued.jti,
        grantId: s.grantId!,
        generation: s.bound.generation,
        expiresAt: (s.issued.claims.exp ?? 0) * 1000,
      },
      db as Tx,
    );
  };

  return {
    type: 'client_credentials',
    checks: [checkClient, resolveScope, resolveAudience, narrowScope, readAgentGrant],
    issue: [bindAgentGrant, issue, recordAgentToken],
    records: (s) => s.grantId !== undefined,
    respond: (s) => ({
      access_token: s.issued.token,
      token_type: s.dpop ? 'DPoP' : 'Bearer',
      expires_in: s.issued.expiresIn,
      scope: s.scope.join(' '),
    }),
  };
}
