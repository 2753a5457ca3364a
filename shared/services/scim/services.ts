/** The SCIM services the container builds (shared/container.ts, `scim`): /Users and the long-lived tokens. */
import type { Database } from '../../db/index.js';
import type { OAuthService } from '../auth/oauth.js';
import type { TokenService } from '../tokens.js';
import { ScimTokenService } from './tokens.js';
import { ScimUserService, type ScimUserDeps } from './users.js';

export interface ScimServices {
  users: ScimUserService;
  tokens: ScimTokenService;
}

export function scimServices(
  db: Database,
  deps: ScimUserDeps & { tokens: TokenService; oauth: OAuthService; issuer: string },
): ScimServices {
  return {
    users: new ScimUserService(db, deps),
    tokens: new ScimTokenService(db, { tokens: deps.tokens, oauth: deps.oauth, issuer: deps.issuer }),
  };
}
