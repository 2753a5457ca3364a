/**
 * The container's core (shared/container.ts adds the directory's lifecycle to it): every service,
 * built in one place (on first use, then kept) for the three composition roots: the daemon's
 * requests (`AppDeps`), its jobs (`daemon/jobs/index.ts`) and the CLI (`cli/base.ts`), so a
 * command cannot drift from the daemon. Why, and the rule that guards it: docs/architecture.md,
 * "The container".
 */
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/index.js';
import type { Metrics } from './metrics.js';
import type { ServiceOptions } from './container-options.js';
import { outboundPolicyFromConfig, type OutboundPolicy } from './net/outbound.js';
import { AgentGrantService } from './services/agents/grants.js';
import { AgentClientMetadataService } from './services/agents/metadata.js';
import { ApprovalService } from './services/approvals.js';
import { AuditLog } from './services/audit.js';
import { AccountService } from './services/auth/account.js';
import { ArtifactService } from './services/auth/artifacts.js';
import { EmailCodeService } from './services/auth/codes.js';
import { OAuthService } from './services/auth/oauth.js';
import { PasskeyService } from './services/auth/passkeys.js';
import { SessionService } from './services/auth/sessions.js';
import { SignInService } from './services/auth/sign-in.js';
import { Throttle } from './services/auth/throttle.js';
import { ClaimRenameService } from './services/claim-rename.js';
import { ClaimsService } from './services/claims.js';
import { RbacTokens } from './services/rbac-tokens.js';
import { ClientAuthenticator } from './services/client-auth.js';
import { CustomClaimsService } from './services/custom-claims.js';
import { DirectoryService } from './services/directory.js';
import { EmailSettingsService } from './services/email-settings.js';
import {
  createExternalTokenRefresh,
  ExternalTokenRefreshSettingsService,
  type ExternalTokenRefreshService,
} from './services/external-token-refresh/index.js';
import { holderName } from './services/federation/holder.js';
import { fieldMappingServices, type FieldMappingServices } from './services/federation/index.js';
import { createMetadataPoller, type MetadataPoller } from './services/federation/metadata-poller.js';
import { FederationResolver } from './services/federation/resolver.js';
import { GrantService } from './services/grants/index.js';
import { IdempotencyService } from './services/idempotency.js';
import { IntrospectionService } from './services/introspection.js';
import { KeyService } from './services/keys.js';
import { createEmailProviders, type EmailProviders, type MailLogger } from './services/mail/index.js';
import { Outbox } from './services/outbox.js';
import type { MailTemplateService } from './services/mail-templates.js';
import { AuditWebhookDeliverer, AuditWebhookSink } from './services/plugins/audit-webhook.js';
import { builtinPlugins, PluginRuntime, PluginService } from './services/plugins/index.js';
import { WebhookEmailProvider } from './services/plugins/webhook-email.js';
import { ProvisioningService } from './services/provisioning/index.js';
import { RecoveryService } from './services/recovery/index.js';
import { RelationshipService } from './services/relationships.js';
import { FapiService } from './services/fapi/index.js';
import { TenantLifecycleService } from './services/tenant-lifecycle.js';
import { IssuerKeys, JtiStore } from './services/token-exchange/id-jag.js';
import { TokenExchangeSettingsService } from './services/token-exchange/settings.js';
import { TokenService } from './services/tokens.js';
import { UpstreamBroker, UpstreamClients, UpstreamIdpRegistry, UpstreamSealer } from './services/upstream-idp/index.js';

/** The CLI logs nothing (it prints): the log mail provider still needs a logger to be built. */
const QUIET: MailLogger = { info: () => undefined, warn: () => undefined };

/**
 * `buildServices(ds, config, logger, options)`. `logger` is the daemon's (services log through
 * children of it); the CLI passes none.
 */
export abstract class CoreServices<L extends Logger | undefined = Logger | undefined> {
  /** Each service once built (typed by its getter's name: `this.#made.keys` is a KeyService). */
  readonly #made: { -readonly [K in keyof CoreServices]?: CoreServices[K] } = {};
  readonly #options: ServiceOptions;

  constructor(
    readonly ds: Database,
    readonly config: Config,
    readonly logger: L,
    options: ServiceOptions = {},
  ) {
    this.#options = options;
  }

  /** Mail composition (shared/container.ts builds it). */
  abstract get mailTemplates(): MailTemplateService;

  get metrics(): Metrics | undefined {
    return this.#options.metrics;
  }

  // ---- process-wide parts -----------------------------------------------------------------

  /** Outbound HTTPS (IAM_OUTBOUND_ALLOW_LOOPBACK, IAM_OUTBOUND_CA_FILE): every fetch's SSRF policy. */
  get outboundPolicy(): OutboundPolicy {
    return (this.#made.outboundPolicy ??= outboundPolicyFromConfig(this.config));
  }

  /** The outbox: mail and webhook entries written in the transaction of their change; `onKick` wakes the jobs. */
  get outbox(): Outbox {
    return this.#options.requests?.outbox ?? (this.#made.outbox ??= new Outbox(this.ds, this.config.secretKey));
  }

  /** Platform plugins' runtime view: its cache checks the config generation on every use. */
  get pluginRuntime(): PluginRuntime {
    return (
      this.#options.requests?.pluginRuntime ??
      (this.#made.pluginRuntime ??= new PluginRuntime(
        this.ds,
        this.config.secretKey,
        builtinPlugins({ allowLoopback: this.config.outboundAllowLoopback }),
      ))
    );
  }

  /** Email notifier providers (smtp, log, the webhook email plugin); the outbox deliverer sends through them. */
  get mail(): EmailProviders {
    return (
      this.#options.requests?.mail ??
      (this.#made.mail ??= createEmailProviders(this.config, this.logger?.child({ component: 'mail' }) ?? QUIET, [
        new WebhookEmailProvider(this.pluginRuntime, this.config.mailFrom, this.outboundPolicy),
      ]))
    );
  }

  /** What `setAuditSink` installs: an audit event reaches the audit webhook plugin through the outbox. */
  get auditSink(): AuditWebhookSink {
    return (this.#made.auditSink ??= new AuditWebhookSink(this.pluginRuntime, this.outbox));
  }

  // ---- directory, keys, tokens ------------------------------------------------------------

  get directory(): DirectoryService {
    return (this.#made.directory ??= new DirectoryService(this.ds, this.config.secretKey, this.config.issuer));
  }

  get keys(): KeyService {
    return (this.#made.keys ??= new KeyService(this.ds, this.config.secretKey, this.config.keyRetireAfterSeconds));
  }

  get tokens(): TokenService {
    return (this.#made.tokens ??= new TokenService(this.config.issuer, this.keys));
  }

  get introspection(): IntrospectionService {
    return (this.#made.introspection ??= new IntrospectionService(this.ds, this.tokens, {
      cacheEntries: this.config.introspectionCacheEntries,
      metrics: this.metrics,
    }));
  }

  /** Client authentication at /token, /revoke and /introspect (all methods but /introspect's Basic fast path). */
  get clientAuth(): ClientAuthenticator {
    return (this.#made.clientAuth ??= new ClientAuthenticator({
      directory: this.directory,
      throttle: this.throttle,
      issuer: this.config.issuer,
      // A private_key_jwt client's jwks_uri: the ID-JAG key cache, fetching the URL itself,
      // under the same SSRF policy.
      remoteKeys: new IssuerKeys({
        policy: this.outboundPolicy,
        direct: true,
        cooldownMs: this.config.clientJwksCooldownSeconds * 1000,
        onFetchError: (url, detail) =>
          this.logger?.warn({ jwks_uri: url, detail }, 'a client jwks_uri could not be fetched'),
      }),
      // Client assertions' jti, in the database every daemon shares (prefix: never an ID-JAG's key).
      jtis: new JtiStore(this.ds, 'cla_'),
    }));
  }

  /** ID-JAG issuers' metadata and keys, cached. */
  get issuerKeys(): IssuerKeys {
    return (this.#made.issuerKeys ??= new IssuerKeys({
      policy: this.outboundPolicy,
      cooldownMs: this.config.idJagJwksCooldownSeconds * 1000,
      onFetchError: (iss, detail) =>
        this.logger?.warn({ issuer: iss, detail }, 'ID-JAG issuer metadata or keys could not be fetched'),
    }));
  }

  /** The ID-JAG jti replay store. */
  get jtis(): JtiStore {
    return (this.#made.jtis ??= new JtiStore(this.ds));
  }

  get tokenExchangeSettings(): TokenExchangeSettingsService {
    return (this.#made.tokenExchangeSettings ??= new TokenExchangeSettingsService(this.ds, {
      allowLoopback: this.config.outboundAllowLoopback,
      ownIssuer: this.config.issuer,
    }));
  }

  // ---- sign-in ----------------------------------------------------------------------------

  /** The sign-in's and client authentication's budgets (docs/security.md). */
  get throttle(): Throttle {
    return (this.#made.throttle ??= new Throttle(this.ds, this.config.throttle, this.config.emailCodeResendSeconds));
  }

  get codes(): EmailCodeService {
    return (this.#made.codes ??= new EmailCodeService(
      this.ds,
      this.config.secretKey,
      this.outbox,
      new URL(this.config.issuer).host,
      this.throttle,
      this.mailTemplates,
    ));
  }

  get sessions(): SessionService {
    return (this.#made.sessions ??= new SessionService(this.ds));
  }

  get artifacts(): ArtifactService {
    return (this.#made.artifacts ??= new ArtifactService(this.ds));
  }

  /** Passkeys: registration, sign-in, the user's list, the operator's (docs/passkeys.md). */
  get passkeys(): PasskeyService {
    return (this.#made.passkeys ??= new PasskeyService(this.ds, {
      issuer: this.config.issuer,
      secretKey: this.config.secretKey,
    }));
  }

  /** Every sign-in: the method's proof spent, the request consumed, the session written, in one transaction. */
  get signIn(): SignInService {
    return (this.#made.signIn ??= new SignInService(this.ds, this));
  }

  get oauth(): OAuthService {
    return (this.#made.oauth ??= new OAuthService(this.ds));
  }

  /** The end user's consents and devices. */
  get account(): AccountService {
    return (this.#made.account ??= new AccountService(this.ds, this.config.secretKey));
  }

  /** The tenants' upstream OpenID providers: registration (one sealer, one cache of discovered configurations). */
  get upstreamIdps(): UpstreamIdpRegistry {
    return (this.#made.upstreamIdps ??= new UpstreamIdpRegistry(this.ds, {
      sealer: this.upstreamSealer,
      clients: this.upstreamClients,
      issuer: this.config.issuer,
      allowLoopback: this.config.outboundAllowLoopback,
    }));
  }

  /** Signing in through an upstream provider, with the registration's sealer and cache. */
  get upstreamBroker(): UpstreamBroker {
    return (this.#made.upstreamBroker ??= new UpstreamBroker(this.ds, {
      sealer: this.upstreamSealer,
      clients: this.upstreamClients,
      issuer: this.config.issuer,
    }));
  }

  get upstreamSealer(): UpstreamSealer {
    return (this.#made.upstreamSealer ??= new UpstreamSealer(this.config.secretKey));
  }

  get upstreamClients(): UpstreamClients {
    return (this.#made.upstreamClients ??= new UpstreamClients({ policy: this.outboundPolicy }));
  }

  // ---- tenants and their operations -------------------------------------------------------

  /** Tenant provisioning operations; its kick wakes the `provisioning` job, whose runner is the jobs side's. */
  get provisioning(): ProvisioningService {
    return (this.#made.provisioning ??= new ProvisioningService(this.ds, {
      directory: this.directory,
      keys: this.keys,
      mail: this.mail,
      options: {
        maxAttempts: this.config.provisioningMaxAttempts,
        retryBaseMs: this.config.provisioningRetryBaseMs,
      },
      logger: this.logger?.child({ component: 'provisioning' }),
    }));
  }

  /** Disaster-recovery operations of tenants, signing route publications as the issuer. */
  get recovery(): RecoveryService {
    return (this.#made.recovery ??= new RecoveryService(this.ds, this.keys, this.config.issuer));
  }

  get tenantLifecycle(): TenantLifecycleService {
    return (this.#made.tenantLifecycle ??= new TenantLifecycleService(this.ds));
  }

  get auditLog(): AuditLog {
    return (this.#made.auditLog ??= new AuditLog(this.ds, this.config.secretKey));
  }

  get emailSettings(): EmailSettingsService {
    return (this.#made.emailSettings ??= new EmailSettingsService(this.ds, this.mail));
  }

  /** Idempotency-Key records of the routes that accept one, and their purge. */
  get idempotency(): IdempotencyService {
    return (this.#made.idempotency ??= new IdempotencyService(this.ds));
  }

  /** Platform plugins: registry, per-scope config and enable state, provisioning. */
  get plugins(): PluginService {
    return (this.#made.plugins ??= new PluginService(this.ds, this.pluginRuntime, this.outboundPolicy));
  }

  /** The audit webhook plugin's deliverer (a job; on the jobs side's connection). */
  get auditWebhookDeliverer(): AuditWebhookDeliverer {
    return (this.#made.auditWebhookDeliverer ??= new AuditWebhookDeliverer(
      this.ds,
      this.outbox,
      this.pluginRuntime,
      this.outboundPolicy,
    ));
  }

  // ---- claims, federation, upstream tokens ------------------------------------------------

  /** The claims of access tokens, ID tokens and UserInfo, from what the user record says. */
  get claims(): ClaimsService {
    return (this.#made.claims ??= new ClaimsService(this));
  }

  /** Permissions in tokens: the governed scopes a user or client holds by role (docs/rbac.md); one per daemon. */
  get rbacTokens(): RbacTokens {
    return (this.#made.rbacTokens ??= new RbacTokens(this.ds));
  }

  /** The FAPI 2.0 profile switch, per tenant and per client, and its checks (docs/fapi.md). */
  get fapi(): FapiService {
    return (this.#made.fapi ??= new FapiService(this.ds));
  }

  /** The grants of /token (shared/services/grants/), each issued and recorded in one transaction. */
  get grants(): GrantService {
    return (this.#made.grants ??= new GrantService({
      ...pick(this, 'ds', 'tokens', 'oauth', 'claims', 'directory', 'agentGrants', 'tokenExchangeSettings'),
      ...pick(this, 'issuerKeys', 'jtis', 'rbacTokens', 'fapi'),
      issuer: this.config.issuer,
      secretKey: this.config.secretKey,
    }));
  }

  /** Custom claim schemas, users' values, and the claims tokens carry (docs/claims.md). */
  get customClaims(): CustomClaimsService {
    return (this.#made.customClaims ??= new CustomClaimsService(this.ds));
  }

  /** Custom claim renames; its kick wakes the `claim-rename` job (same batches, same lease everywhere). */
  get claimRename(): ClaimRenameService {
    return (this.#made.claimRename ??= new ClaimRenameService(this.ds, {
      options: this.config.claimRename,
      logger: this.logger?.child({ component: 'claim-rename' }),
    }));
  }

  /** Source profiles, field-mapping sets, federation trust sources, operational notification states. */
  get fieldMapping(): FieldMappingServices {
    return (this.#made.fieldMapping ??= fieldMappingServices(this.ds, {
      allowLoopback: this.config.outboundAllowLoopback,
      maxAutomaticSources: this.config.federationMaxAutomaticSources,
    }));
  }

  /** The SAML metadata poller: the job's and `iam federation poll`'s (byte cap, deadline, concurrency). */
  get federationPoller(): MetadataPoller {
    return (this.#made.federationPoller ??= createMetadataPoller(this.ds, this.config, {
      holder: holderName(this.#options.role ?? 'daemon'),
      metrics: this.metrics,
    }));
  }

  /** Which trust source resolves a SAML entity id, and why (`iam federation resolve`). */
  get federationResolver(): FederationResolver {
    return (this.#made.federationResolver ??= new FederationResolver(this.ds));
  }

  /** The tenant's external token refresh configuration (the upstream token scan's settings). */
  get externalTokenRefreshSettings(): ExternalTokenRefreshSettingsService {
    return (this.#made.externalTokenRefreshSettings ??= new ExternalTokenRefreshSettingsService(this.ds));
  }

  /**
   * The upstream token scan, leasing links as `holder` (the scheduler's, or the CLI's): built
   * per holder, so not kept.
   */
  externalTokenRefresh(holder: string): ExternalTokenRefreshService {
    return createExternalTokenRefresh(this.ds, {
      secretKey: this.config.secretKey,
      policy: this.outboundPolicy,
      holder,
    });
  }

  // ---- access graph, approvals, agents ----------------------------------------------------

  /** The access graph: typed, optionally expiring edges between users of a tenant. */
  get relationships(): RelationshipService {
    return (this.#made.relationships ??= new RelationshipService(this.ds));
  }

  /** Approval requests, their steps, grants and approver notifications (and the expiry job's pass). */
  get approvals(): ApprovalService {
    return (this.#made.approvals ??= new ApprovalService(this.ds, this.outbox, this.mailTemplates));
  }

  /** Agent grants (docs/agents.md): create, show, PATCH, tokens bound to a grant. */
  get agentGrants(): AgentGrantService {
    return (this.#made.agentGrants ??= new AgentGrantService(this.ds, this.outbox));
  }

  /** The agent-safe client metadata update. */
  get agentClientMetadata(): AgentClientMetadataService {
    return (this.#made.agentClientMetadata ??= new AgentClientMetadataService(this.ds));
  }
}

/** The named parts of the container, read (built) now. */
function pick<K extends keyof CoreServices>(s: CoreServices, ...keys: K[]): Pick<CoreServices, K> {
  return Object.fromEntries(keys.map((k) => [k, s[k]])) as Pick<CoreServices, K>;
}
