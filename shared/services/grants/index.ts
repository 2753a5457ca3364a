/**
 * The token endpoint's grants (RFC 6749 §4), one file each, as node-oidc-provider's
 * lib/actions/grants/ (docs/architecture.md, "Grants and claims"). POST /token authenticates the
 * client, hands the parameters here, and renders what comes back.
 */
import { UnsupportedGrantType } from '../../errors.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import type { GrantDeps } from './deps.js';
import { runGrant, type Grant, type TokenRequest, type TokenResponseBody } from './grant.js';
import { refreshTokenGrant } from './refresh-token.js';
import { tokenExchangeGrant } from './token-exchange.js';

export type { GrantDeps } from './deps.js';
export type { GrantLog, TokenRequest, TokenResponseBody } from './grant.js';
export { parseScope, TokenParams } from '../../token-params.js';
export { MAX_ACT_DEPTH, TOKEN_EXCHANGE_GRANT } from './token-exchange.js';

export class GrantService {
  private readonly grants = new Map<string, Grant<TokenRequest>>();

  constructor(private readonly deps: GrantDeps) {
    for (const g of [
      clientCredentialsGrant(deps),
      authorizationCodeGrant(deps),
      refreshTokenGrant(deps),
      tokenExchangeGrant(deps),
    ] as unknown as Grant<TokenRequest>[])
      this.grants.set(g.type, g);
  }

  /** Runs the grant `grantType` names for an authenticated client (RFC 6749 §5.2 errors thrown as OAuthError). */
  async run(grantType: string, req: TokenRequest): Promise<TokenResponseBody> {
    const g = this.grants.get(grantType);
    if (!g) throw new UnsupportedGrantType(`Unsupported grant_type: ${grantType}`);
    return runGrant(this.deps, g, req);
  }
}
