/** The services the grants are built from (daemon/main.ts passes them). */
import type { Database } from '../../db/index.js';
import type { AgentGrantService } from '../agents/grants.js';
import type { OAuthService } from '../auth/oauth.js';
import type { ClaimsService } from '../claims.js';
import type { DirectoryService } from '../directory.js';
import type { FapiService } from '../fapi/index.js';
import type { IssuerKeys, JtiStore } from '../token-exchange/id-jag.js';
import type { TokenExchangeSettingsService } from '../token-exchange/settings.js';
import type { RbacTokens } from '../rbac-tokens.js';
import type { TokenService } from '../tokens.js';

export interface GrantDeps {
  ds: Database;
  /** This authorization server's issuer identifier: the default audience, and an ID-JAG's `aud`. */
  issuer: string;
  /** The service's secret key: the ID token's `sid` is derived from the session id with it. */
  secretKey: string;
  tokens: TokenService;
  oauth: OAuthService;
  claims: ClaimsService;
  directory: DirectoryService;
  agentGrants: AgentGrantService;
  tokenExchangeSettings: TokenExchangeSettingsService;
  /** ID-JAG issuers' metadata and keys, and the ID-JAG jti replay store. */
  issuerKeys: IssuerKeys;
  jtis: JtiStore;
  /** The governed scopes a user or client holds by role (docs/rbac.md): the daemon's one instance. */
  rbacTokens: RbacTokens;
  /** The FAPI 2.0 profile that applies to a client (docs/fapi.md): the refresh grant asks it whether to rotate. */
  fapi: FapiService;
}
