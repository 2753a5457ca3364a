/**
 * The authorization_code grant (RFC 6749 §4.1.3, PKCE RFC 7636 §4.6):
 *   checkClientGrant → readCode | (one transaction) redeemCode → issueTokens
 * The code is consumed, the token family and refresh token recorded, and the access and ID
 * tokens signed in one transaction (OAuthService.exchangeCodeIn does the redeeming). A replayed
 * code revokes the family it produced (RFC 6749 §4.1.2), after the transaction rolled back.
 */
import type { Tx } from '../../db/index.js';
import type { CodeRow } from '../auth/oauth.js';
import { InvalidRequest, UnauthorizedClient } from '../../errors.js';
import type { GrantDeps } from './deps.js';
import type { Grant, Step, IssueStep, TokenRequest, TokenResponseBody } from './grant.js';
import { revokeOnReuse } from './reuse.js';
import { requestedResources, tokenResources, userTokens } from './user-tokens.js';

interface State extends TokenRequest {
  code: string;
  redirectUri?: string;
  codeVerifier?: string;
  resource: string[];
  row: CodeRow;
  refreshToken?: string;
  body: TokenResponseBody;
}

export function authorizationCodeGrant(deps: GrantDeps): Grant<State> {
  const tokensFor = userTokens(deps);

  const checkClientGrant: Step<State> = (s) => {
    if (!s.client.grant_types.includes('authorization_code'))
      throw new UnauthorizedClient('This client may not use the authorization_code grant.');
  };

  const readCode: Step<State> = (s) => {
    const code = s.params.single('code');
    if (!code) throw new InvalidRequest('code is required.');
    s.code = code;
    s.redirectUri = s.params.single('redirect_uri');
    s.codeVerifier = s.params.single('code_verifier');
    s.resource = requestedResources(s.params);
  };

  // Always in the grant's transaction (the grant records on every request).
  const redeemCode: IssueStep<State> = async (s, db) => {
    const { code, refreshToken } = await deps.oauth.exchangeCodeIn(db as Tx, s.client, {
      code: s.code,
      redirectUri: s.redirectUri,
      codeVerifier: s.codeVerifier,
      dpopJkt: s.dpop?.jkt,
    });
    s.row = code;
    s.refreshToken = refreshToken;
  };

  const issueTokens: IssueStep<State> = async (s, db) => {
    const { row } = s;
    s.body = await tokensFor(
      {
        client: s.client,
        userId: row.user_id,
        scope: row.scope,
        familyId: row.family_id,
        nonce: row.nonce,
        authTimeMs: row.auth_time,
        acr: row.acr,
        amr: row.amr,
        idToken: true,
        sessionId: row.session_id,
        resource: await tokenResources(s.resource, row.resource, s.client, db, deps.issuer),
        jkt: s.dpop?.jkt,
      },
      db,
    );
    if (s.refreshToken) s.body.refresh_token = s.refreshToken;
  };

  return {
    type: 'authorization_code',
    checks: [checkClientGrant, readCode],
    issue: [redeemCode, issueTokens],
    respond: (s) => s.body,
    onError: (e, s) => revokeOnReuse(deps, e, s.log),
  };
}
