/**
 * The container (docs/architecture.md, "The container"): the core's services
 * (shared/container-core.ts) and the directory's lifecycle: users, clients, tenants, import and
 * the sign-in history. To add a service: one getter in the file of its area.
 */
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { ServiceOptions } from './container-options.js';
import { CoreServices } from './container-core.js';
import type { Database } from './db/index.js';
import { UserLifecycleService } from './services/user-lifecycle.js';
import { AccountProfileService } from './services/auth/profile.js';
import { SignInHistoryService } from './services/sign-ins.js';
import { ClientLifecycleService } from './services/client-lifecycle.js';
import { TenantDirectoryService } from './services/tenant-directory.js';
import { UserDirectoryService } from './services/users.js';
import { UserTransferService } from './services/user-transfer/index.js';
import { BrandingService } from './services/branding.js';
import { ResourceServerService } from './services/resource-servers.js';
import { SessionPolicyService } from './services/session-policy.js';
import { MailTemplateService } from './services/mail-templates.js';
import { RbacService } from './services/rbac/index.js';
import { GroupService } from './services/rbac/groups.js';
import { OperatorService } from './services/console/operators.js';
import { InvitationService } from './services/invitations.js';
import { scimServices, type ScimServices } from './services/scim/services.js';
import { ClientMetadataService } from './services/client-metadata/index.js';
import { registrationServices, type RegistrationServices } from './services/registration/index.js';
import { ResponseSigner } from './services/signed-responses.js';
import { PushedRequestService } from './services/par/index.js';
import { DpopService } from './services/dpop/index.js';

export class Services<L extends Logger | undefined = Logger | undefined> extends CoreServices<L> {
  /** Each service of this part once built. */
  readonly #made: { -readonly [K in Exclude<keyof Services, keyof CoreServices> | 'mailTemplates']?: Services[K] } = {};

  /** The account page's name and address change (the change's code goes to the new address). */
  get accountProfile(): AccountProfileService {
    return (this.#made.accountProfile ??= new AccountProfileService(
      this.ds,
      this.config,
      this.outbox,
      this.throttle,
      this.mailTemplates,
    ));
  }

  /** The sign-in history: a tenant's or a user's sign-in attempts (admin API, CLI, account page). */
  get signIns(): SignInHistoryService {
    return (this.#made.signIns ??= new SignInHistoryService(this.ds, this.config.secretKey));
  }

  /** A user's disable, enable, sign-out everywhere and erasure (docs/directory.md). */
  get userLifecycle(): UserLifecycleService {
    return (this.#made.userLifecycle ??= new UserLifecycleService(this.ds, this.config.secretKey));
  }

  /** A client's GET/PATCH, secret rotation, disable, enable and delete (docs/directory.md). */
  get clientLifecycle(): ClientLifecycleService {
    return (this.#made.clientLifecycle ??= new ClientLifecycleService(this.ds, this.config.secretKey, this.directory));
  }

  /** Tenants: list, counts, PATCH, offboarding export, offboard, restore, purge (docs/directory.md). */
  get tenantDirectory(): TenantDirectoryService {
    const grace = { purgeGraceSeconds: this.config.tenantPurgeGraceSeconds };
    return (this.#made.tenantDirectory ??= new TenantDirectoryService(this.ds, this.config.secretKey, grace));
  }

  /** Users after creation: read one with its ETag, list and search, PATCH under If-Match. */
  get userDirectory(): UserDirectoryService {
    const deps = { customClaims: this.customClaims, outbox: this.outbox, templates: this.mailTemplates };
    return (this.#made.userDirectory ??= new UserDirectoryService(this.ds, this.config.secretKey, deps));
  }

  /** The directory's import and export (JSONL, CSV; docs/directory.md, "Users: import and export"). */
  get userTransfer(): UserTransferService {
    return (this.#made.userTransfer ??= new UserTransferService(this.ds, this.customClaims));
  }

  /** A tenant's look on its pages and in its mails (docs/branding.md). */
  get branding(): BrandingService {
    return (this.#made.branding ??= new BrandingService(this.ds));
  }

  /** Every mail's composition, tenants' template overrides, preview (docs/email.md, "Templates"). */
  get mailTemplates(): MailTemplateService {
    const opts = {
      issuerHost: new URL(this.config.issuer).host,
      logger: this.logger?.child({ component: 'mail' }),
      branding: (tenantId: string) => this.branding.get(tenantId),
    };
    return (this.#made.mailTemplates ??= new MailTemplateService(this.ds, opts));
  }

  /** API resource permissions, roles and their assignments (docs/rbac.md). */
  get rbac(): RbacService {
    const deps = { mappingSets: () => this.fieldMapping.mappingSets, userLifecycle: () => this.userLifecycle };
    return (this.#made.rbac ??= new RbacService(this.ds, this.config.secretKey, deps));
  }

  /** Groups and their members, for the admin API, the CLI and SCIM /Groups (docs/rbac.md). */
  get groups(): GroupService {
    const deps = { mappingSets: this.fieldMapping.mappingSets, userLifecycle: this.userLifecycle };
    return (this.#made.groups ??= new GroupService(this.ds, this.config.secretKey, deps));
  }

  /** SCIM 2.0 (docs/scim.md): /Users, the directory's users as a provisioning client sees them; long-lived tokens. */
  get scim(): ScimServices {
    const d = { lifecycle: this.userLifecycle, customClaims: this.customClaims, fieldMapping: this.fieldMapping };
    const t = { tokens: this.tokens, oauth: this.oauth, issuer: this.config.issuer };
    return (this.#made.scim ??= scimServices(this.ds, { ...d, ...t }));
  }

  /** Console operators: the platform tenant and its operator roles (docs/console.md). */
  get operators(): OperatorService {
    const d = { directory: () => this.directory, provisioning: () => this.provisioning, rbac: () => this.rbac };
    return (this.#made.operators ??= new OperatorService(this.ds, d));
  }

  /** Invitations: a user mailed a sign-in link to the tenant's account page (docs/directory.md). */
  get invitations(): InvitationService {
    const d = { outbox: this.outbox, templates: this.mailTemplates };
    return (this.#made.invitations ??= new InvitationService(this.ds, d));
  }

  /** A tenant's session timeouts, idle and absolute (docs/security.md, "Session timeouts"). */
  get sessionPolicy(): SessionPolicyService {
    return (this.#made.sessionPolicy ??= new SessionPolicyService(this.ds));
  }

  /** Resource servers: the RFC 8707 rule, hosted RFC 9728 metadata (docs/mcp.md). */
  get resourceServers(): ResourceServerService {
    return (this.#made.resourceServers ??= new ResourceServerService(this.ds, this.config.issuer, this.directory));
  }

  /** Client ID metadata documents: fetch, cache (per daemon), tenant policy (docs/client-metadata-documents.md). */
  get clientMetadata(): ClientMetadataService {
    const o = { directory: this.directory, outbound: this.outboundPolicy, logger: this.logger };
    return (this.#made.clientMetadata ??= new ClientMetadataService(this.ds, o));
  }

  /** Dynamic client registration (RFC 7591/7592), its policy, initial access tokens, expiry (docs/registration.md). */
  get registration(): RegistrationServices {
    const d = { directory: this.directory, clientLifecycle: () => this.clientLifecycle };
    return (this.#made.registration ??= registrationServices(this.ds, d));
  }

  /** JWT authorization responses (JARM) and JWT introspection responses (RFC 9701; docs/jarm.md). */
  get responseSigner(): ResponseSigner {
    return (this.#made.responseSigner ??= new ResponseSigner(this.config.issuer, this.keys));
  }

  /** Pushed authorization requests (RFC 9126), request objects (RFC 9101), the tenant's policy (docs/par.md). */
  get par(): PushedRequestService {
    const o = { issuer: this.config.issuer, clientAuth: this.clientAuth };
    return (this.#made.par ??= new PushedRequestService(this.ds, o));
  }

  /** DPoP (RFC 9449): proof checks, server nonces, the tenant's policy (docs/dpop.md). */
  get dpop(): DpopService {
    return (this.#made.dpop ??= new DpopService(this.ds, this.config.secretKey, this.config.issuer));
  }
}

/** The container of one database handle; see the top of this file. */
export function buildServices<L extends Logger | undefined>(
  ds: Database,
  config: Config,
  logger: L,
  options: ServiceOptions = {},
): Services<L> {
  return new Services(ds, config, logger, options);
}
