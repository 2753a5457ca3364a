import type { Logger } from 'pino';
import type { Config } from '../shared/config.js';
import type { Database } from '../shared/db/index.js';
import type { DirectoryService } from '../shared/services/directory.js';
import type { KeyService } from '../shared/services/keys.js';
import type { TokenService } from '../shared/services/tokens.js';
import type { AccessTokenClaims } from '../shared/services/tokens.js';
import type { ArtifactService } from '../shared/services/auth/artifacts.js';
import type { EmailCodeService } from '../shared/services/auth/codes.js';
import type { OAuthService } from '../shared/services/auth/oauth.js';
import type { Passkeys } from '../shared/services/auth/passkeys.js';
import type { FoundSession, SessionService } from '../shared/services/auth/sessions.js';
import type { SignInService } from '../shared/services/auth/sign-in.js';
import type { Throttle } from '../shared/services/auth/throttle.js';
import type { IntrospectionService } from '../shared/services/introspection.js';
import type { EmailProviders } from '../shared/services/mail/index.js';
import type { ProvisioningService } from '../shared/services/provisioning/index.js';
import type { ClaimRenameService } from '../shared/services/claim-rename.js';
import type { IdempotencyHandle, IdempotencyService } from '../shared/services/idempotency.js';
import type { AccountService } from '../shared/services/auth/account.js';
import type { AuditLog } from '../shared/services/audit.js';
import type { EmailSettingsService } from '../shared/services/email-settings.js';
import type { ApprovalService } from '../shared/services/approvals.js';
import type { RelationshipService } from '../shared/services/relationships.js';
import type { RecoveryService } from '../shared/services/recovery/index.js';
import type { TenantLifecycleService } from '../shared/services/tenant-lifecycle.js';
import type { ClientAuthenticator } from '../shared/services/client-auth.js';
import type { IssuerKeys, JtiStore } from '../shared/services/token-exchange/id-jag.js';
import type { TokenExchangeSettingsService } from '../shared/services/token-exchange/settings.js';
import type { CustomClaimsService } from '../shared/services/custom-claims.js';
import type { FieldMappingServices } from '../shared/services/federation/index.js';
import type { ExternalTokenRefreshSettingsService } from '../shared/services/external-token-refresh/config.js';
import type { UpstreamBroker, UpstreamIdpRegistry } from '../shared/services/upstream-idp/index.js';
import type { PluginService } from '../shared/services/plugins/index.js';
import type { AgentClientMetadataService } from '../shared/services/agents/metadata.js';
import type { AgentGrantService } from '../shared/services/agents/grants.js';
import type { Metrics } from '../shared/metrics.js';
import type { ClaimsService } from '../shared/services/claims.js';
import type { GrantService } from '../shared/services/grants/index.js';

/** Everything the routes need, built once by main.ts and passed down explicitly. */
export interface AppDeps {
  config: Config;
  ds: Database;
  logger: Logger;
  directory: DirectoryService;
  keys: KeyService;
  tokens: TokenService;
  codes: EmailCodeService;
  /** The sign-in's and client authentication's budgets (docs/security.md). */
  throttle: Throttle;
  sessions: SessionService;
  artifacts: ArtifactService;
  /** Passkeys: registration, sign-in, the user's list (docs/passkeys.md). */
  passkeys: Passkeys;
  oauth: OAuthService;
  /** Every sign-in: a method's proof, the authorization request and the session in one transaction. */
  signIn: SignInService;
  introspection: IntrospectionService;
  /** Email notifier providers (smtp, log); the outbox deliverer sends through them. */
  mail: EmailProviders;
  /** Tenant provisioning operations; its kick wakes the `provisioning` job. */
  provisioning: ProvisioningService;
  /** Disaster-recovery operations of tenants. */
  recovery: RecoveryService;
  tenantLifecycle: TenantLifecycleService;
  auditLog: AuditLog;
  emailSettings: EmailSettingsService;
  tokenExchangeSettings: TokenExchangeSettingsService;
  /** Custom claim schemas, users' values, and the claims tokens carry (docs/claims.md). */
  customClaims: CustomClaimsService;
  /** The ID token's, access token's and UserInfo's user claims, from the user record. */
  claims: ClaimsService;
  /** The token endpoint's grants (shared/services/grants/). */
  grants: GrantService;
  /** Source profiles, field-mapping sets, federation trust sources, operational notification states. */
  fieldMapping: FieldMappingServices;
  /** The tenant's external token refresh configuration (the upstream token scan's settings). */
  externalTokenRefreshSettings: ExternalTokenRefreshSettingsService;
  /** ID-JAG issuers' metadata and keys, cached; and the ID-JAG jti replay store. */
  issuerKeys: IssuerKeys;
  jtis: JtiStore;
  /** Client authentication at /token, /revoke and /introspect (all methods but /introspect's Basic fast path). */
  clientAuth: ClientAuthenticator;
  /** The end user's consents and devices. */
  account: AccountService;
  /** Idempotency-Key records of the routes that accept one. */
  idempotency: IdempotencyService;
  /** Custom claim renames; its kick wakes the `claim-rename` job. */
  claimRename: ClaimRenameService;
  /** The tenants' upstream OpenID providers (registration), and signing in through them. */
  upstreamIdps: UpstreamIdpRegistry;
  upstreamBroker: UpstreamBroker;
  /** Platform plugins: registry, per-scope config and enable state, provisioning. */
  plugins: PluginService;
  /** The access graph: typed, optionally expiring edges between users of a tenant. */
  relationships: RelationshipService;
  /** Approval requests, their steps, grants and approver notifications. */
  approvals: ApprovalService;
  /** Agent grants (docs/agents.md): create, show, PATCH, tokens bound to a grant. */
  agentGrants: AgentGrantService;
  /** The agent-safe client metadata update. */
  agentClientMetadata: AgentClientMetadataService;
  /** The Prometheus series (docs/metrics.md); only when IAM_METRICS_PORT is set. */
  metrics?: Metrics;
}

/** What our middleware puts on ctx.state. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** Set by the bearer middleware. */
  auth?: AccessTokenClaims;
  /**
   * Set by the user bearer middleware (koa-user-bearer.ts): whether the token reaches the whole
   * account API (it carries the `account` scope and its client is first-party); without it a
   * token reaches only its own client's consent (docs/scopes.md, "The account scope").
   */
  account?: boolean;
  /** Set by the session middleware (koa-session.ts): the browser's live session and its user. */
  session?: FoundSession;
  /**
   * Set by the guard middleware: the validated input. Unknown-valued here; a handler registered
   * through `api.add` sees it typed from its route's schemas (WithGuard in koa-guard.ts).
   */
  guard?: { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown };
  /** Set by the error renderer when it hands out an error_id, so the access-log line carries it. */
  errorId?: string;
  /** Set by the idempotency middleware: record the answer in the transaction of the change. */
  idempotency?: IdempotencyHandle;
  /**
   * Set by the registry's tenant check (route-declarations.ts): the tenant a bearer route acts
   * on, from its declared binding; a route's handlers see it typed (string, or null for the
   * platform-wide bindings).
   */
  tenant?: string | null;
  /**
   * Set by the route's declared error style (ErrorStyle, route-declarations.ts); the error
   * renderer reads it (koa-error-handler.ts).
   */
  errorStyle?: 'oauth' | 'user';
}
