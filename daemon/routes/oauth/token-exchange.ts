/**
 * RFC 8693 token exchange at POST /token (grant_type=urn:ietf:params:oauth:grant-type:token-exchange),
 * with ID-JAG subject tokens (draft-ietf-oauth-identity-assertion-authz-grant).
 * Implementation in progress: until it lands the grant is refused as unsupported.
 */
import type { Middleware } from 'koa';
import { UnsupportedGrantType } from '../../../shared/errors.js';
import type { AppDeps } from '../../context.js';
import type { ClientAuthState } from '../../middleware/koa-client-auth.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

export function tokenExchangeGrant(_deps: AppDeps): Middleware<ClientAuthState> {
  return async () => {
    throw new UnsupportedGrantType('Token exchange is not enabled.');
  };
}
