/**
 * The refresh_token grant (RFC 6749 §6), rotated (RFC 9700 §4.14.2):
 *   checkClientGrant → readRefreshToken | (one transaction) rotate → issueTokens
 * The presented token is consumed, the next one recorded and the access token signed in one
 * transaction (OAuthService.rotateRefreshTokenIn). No ID token: the refresh proves no new
 * authentication. Presenting a consumed token again revokes the family. A client under the
 * FAPI 2.0 profile keeps its refresh token (§5.3.2.1: no rotation unless a retry with the
 * previous token would succeed; docs/fapi.md, "Refresh tokens").
 */
import type { Tx } from '../../db/index.js';
import type { FamilyRow } from '../../repositories/index.js';
import { InvalidRequest, UnauthorizedClient } from '../../errors.js';
import type { GrantDeps } from './deps.js';
import type { Grant, IssueStep, Step, TokenRequest, TokenResponseBody } from './grant.js';
import { revokeOnReuse } from './reuse.js';
import { requestedResources, tokenResources, userTokens } from './user-tokens.js';

interface State extends TokenRequest {
  token: string;
  /** False under the FAPI 2.0 profile: the presented token is kept, not consumed. */
  rotate: boolean;
  requested?: string[];
  resource: string[];
  family: FamilyRow;
  next: string;
  body: TokenResponseBody;
}

export function refreshTokenGrant(deps: GrantDeps): Grant<State> {
  const tokensFor = userTokens(deps);

  const checkClientGrant: Step<State> = (s) => {
    if (!s.client.grant_types.includes('refresh_token'))
      throw new UnauthorizedClient('This client may not use the refresh_token grant.');
  };

  const readRefreshToken: Step<State> = async (s) => {
    const token = s.params.single('refresh_token');
    if (!token) throw new InvalidRequest('refresh_token is required.');
    s.token = token;
    s.rotate = (await deps.fapi.profileOf(s.client)) === 'off';
    s.requested = s.params.scope();
    s.resource = requestedResources(s.params);
  };

  const rotate: IssueStep<State> = async (s, db) => {
    const { family, refreshToken } = await deps.oauth.rotateRefreshTokenIn(db as Tx, s.client, s.token, {
      requestedScope: s.requested,
      dpopJkt: s.dpop?.jkt,
      rotate: s.rotate,
    });
    s.family = family;
    s.next = refreshToken;
  };

  const issueTokens: IssueStep<State> = async (s, db) => {
    s.body = await tokensFor(
      {
        client: s.client,
        userId: s.family.user_id!,
        scope: s.requested ?? s.family.scope,
        familyId: s.family.id,
        nonce: null,
        authTimeMs: 0,
        acr: '',
        amr: [],
        idToken: false,
        resource: await tokenResources(s.resource, s.family.resource, s.client, db, deps.issuer),
        jkt: s.dpop?.jkt,
      },
      db,
    );
    s.body.refresh_token = s.next;
  };

  return {
    type: 'refresh_token',
    checks: [checkClientGrant, readRefreshToken],
    issue: [rotate, issueTokens],
    respond: (s) => s.body,
    onError: (e, s) => revokeOnReuse(deps, e, s.log),
  };
}
