/**
 * TenantScope: the only way to tenant-owned rows. SQLite and MySQL have no row-level security,
 * so this is the isolation boundary: a scope is bound to one tenant id when it is made, and
 * every statement of every repository it hands out is bound to that id (`tenant_id = ?` in
 * each WHERE, the id in each INSERT). A repository of tenant-owned rows has no constructor
 * that takes a tenant id from anywhere else, and no method that reads without one.
 *
 * The few lookups that must cross tenants (a client_id, a cookie, a code or a token presented
 * before anyone knows its tenant) are in lookups.ts; each returns the tenant id that scopes
 * the rest of the request.
 *
 * Repositories are made on first use, so a scope made per request costs one object.
 */
import type { Db, Tx } from '../db/index.js';
import { ScopedApprovals } from './approvals.js';
import { ScopedAgentGrants } from './agent-grants.js';
import { ScopedAudit, ScopedAuthHistory } from './audit.js';
import { ScopedClaimRenames } from './claim-renames.js';
import { ScopedClients } from './clients.js';
import type { ScopeRef } from './common.js';
import { ScopedPasskeys, ScopedPasskeyTombstones, ScopedWebauthnChallenges } from './passkeys.js';
import { ScopedPluginSettings } from './plugins.js';
import { ScopedProvisioning } from './provisioning.js';
import { ScopedRecoveryOperations } from './recovery.js';
import { ScopedRelationships } from './relationships.js';
import { ScopedLookupRows, ScopedTenantRoutes } from './tenant-routes.js';
import { ScopedLifecycleJobs } from './tenants.js';
import { ScopedConsents } from './consents.js';
import { ScopedCustomClaims } from './custom-claims.js';
import { ScopedExports } from './exports.js';
import { ScopedTrustSources } from './federation.js';
import { ScopedFieldMappingSets, ScopedSourceProfiles } from './field-mapping.js';
import { ScopedNotificationStates } from './notification-states.js';
import { ScopedLinkRefresh } from './external-token-refresh.js';
import { ScopedAuthCodes, ScopedAuthRequests } from './authorization.js';
import { ScopedArtifacts, ScopedEmailCodes, ScopedSessions } from './sessions.js';
import { ScopedTokens } from './tokens.js';
import { ScopedUpstreamIdps, ScopedUpstreamLoginStates } from './upstream-idps.js';
import { ScopedUpstreamLinks } from './upstream-links.js';
import { ScopedUsers } from './users.js';
import { ScopedUserErasure } from './user-erasure.js';
import { ScopedUserTransfer } from './user-transfer.js';
import { ScopedFederationEntities } from './federation-entities.js';
import { ScopedTenantData } from './tenant-directory.js';
import { ScopedMailTemplates } from './mail-templates.js';
import { ScopedRbacGrants } from './rbac-grants.js';
import { ScopedResourcePermissions, ScopedRoleAssignments, ScopedRoles } from './rbac.js';
import { ScopedGroups } from './groups.js';
import { ScopedScimUsers } from './scim-users.js';
import { ScopedRegistrations } from './registrations.js';
import { ScopedPushedRequests } from './pushed-requests.js';

export class TenantScope implements ScopeRef {
  #clients?: ScopedClients;
  #users?: ScopedUsers;
  #audit?: ScopedAudit;
  #provisioning?: ScopedProvisioning;
  #recoveryOperations?: ScopedRecoveryOperations;
  #routes?: ScopedTenantRoutes;
  #lookupRows?: ScopedLookupRows;
  #lifecycleJobs?: ScopedLifecycleJobs;
  #emailCodes?: ScopedEmailCodes;
  #sessions?: ScopedSessions;
  #artifacts?: ScopedArtifacts;
  #authRequests?: ScopedAuthRequests;
  #authCodes?: ScopedAuthCodes;
  #pushedRequests?: ScopedPushedRequests;
  #tokens?: ScopedTokens;
  #consents?: ScopedConsents;
  #exports?: ScopedExports;
  #authHistory?: ScopedAuthHistory;
  #claimRenames?: ScopedClaimRenames;
  #customClaims?: ScopedCustomClaims;
  #sourceProfiles?: ScopedSourceProfiles;
  #fieldMappingSets?: ScopedFieldMappingSets;
  #trustSources?: ScopedTrustSources;
  #notificationStates?: ScopedNotificationStates;
  #upstreamIdps?: ScopedUpstreamIdps;
  #upstreamLinks?: ScopedUpstreamLinks;
  #upstreamLoginStates?: ScopedUpstreamLoginStates;
  #linkRefresh?: ScopedLinkRefresh;
  #plugins?: ScopedPluginSettings;
  #federationEntities?: ScopedFederationEntities;
  #relationships?: ScopedRelationships;
  #approvals?: ScopedApprovals;
  #agentGrants?: ScopedAgentGrants;
  #passkeys?: ScopedPasskeys;
  #passkeyTombstones?: ScopedPasskeyTombstones;
  #webauthnChallenges?: ScopedWebauthnChallenges;
  #userErasure?: ScopedUserErasure;
  #tenantData?: ScopedTenantData;
  #userTransfer?: ScopedUserTransfer;
  #mailTemplates?: ScopedMailTemplates;
  #rbacGrants?: ScopedRbacGrants;
  #resourcePermissions?: ScopedResourcePermissions;
  #roles?: ScopedRoles;
  #roleAssignments?: ScopedRoleAssignments;
  #groups?: ScopedGroups;
  #scimUsers?: ScopedScimUsers;
  #registrations?: ScopedRegistrations;

  constructor(
    readonly db: Db,
    readonly tenantId: string,
  ) {
    if (!tenantId) throw new Error('TenantScope needs a tenant id');
  }

  /** The same tenant, inside an open transaction. */
  in(tx: Tx): TenantScope {
    return new TenantScope(tx, this.tenantId);
  }

  get clients(): ScopedClients {
    return (this.#clients ??= new ScopedClients(this));
  }
  get users(): ScopedUsers {
    return (this.#users ??= new ScopedUsers(this));
  }
  get audit(): ScopedAudit {
    return (this.#audit ??= new ScopedAudit(this));
  }
  /** Provisioning operations, their steps and history. */
  get provisioning(): ScopedProvisioning {
    return (this.#provisioning ??= new ScopedProvisioning(this));
  }
  get recoveryOperations(): ScopedRecoveryOperations {
    return (this.#recoveryOperations ??= new ScopedRecoveryOperations(this));
  }
  /** The tenant's route and its signed publications. */
  get routes(): ScopedTenantRoutes {
    return (this.#routes ??= new ScopedTenantRoutes(this));
  }
  /** The tenant's routing registry (and the recovery smoke checks' probes). */
  get lookupRows(): ScopedLookupRows {
    return (this.#lookupRows ??= new ScopedLookupRows(this));
  }
  get lifecycleJobs(): ScopedLifecycleJobs {
    return (this.#lifecycleJobs ??= new ScopedLifecycleJobs(this));
  }
  get emailCodes(): ScopedEmailCodes {
    return (this.#emailCodes ??= new ScopedEmailCodes(this));
  }
  get sessions(): ScopedSessions {
    return (this.#sessions ??= new ScopedSessions(this));
  }
  get artifacts(): ScopedArtifacts {
    return (this.#artifacts ??= new ScopedArtifacts(this));
  }
  get authRequests(): ScopedAuthRequests {
    return (this.#authRequests ??= new ScopedAuthRequests(this));
  }
  get authCodes(): ScopedAuthCodes {
    return (this.#authCodes ??= new ScopedAuthCodes(this));
  }
  /** Pushed authorization requests (RFC 9126). */
  get pushedRequests(): ScopedPushedRequests {
    return (this.#pushedRequests ??= new ScopedPushedRequests(this));
  }
  get tokens(): ScopedTokens {
    return (this.#tokens ??= new ScopedTokens(this));
  }
  get consents(): ScopedConsents {
    return (this.#consents ??= new ScopedConsents(this));
  }
  get exports(): ScopedExports {
    return (this.#exports ??= new ScopedExports(this));
  }
  get authHistory(): ScopedAuthHistory {
    return (this.#authHistory ??= new ScopedAuthHistory(this));
  }
  /** Custom claim renames, the keys they hold, and their statements on claim schemas and values. */
  get claimRenames(): ScopedClaimRenames {
    return (this.#claimRenames ??= new ScopedClaimRenames(this));
  }
  /** Custom claim schemas and the users' values (docs/claims.md). */
  get customClaims(): ScopedCustomClaims {
    return (this.#customClaims ??= new ScopedCustomClaims(this));
  }
  /** Source profiles and their schema versions (field mapping). */
  get sourceProfiles(): ScopedSourceProfiles {
    return (this.#sourceProfiles ??= new ScopedSourceProfiles(this));
  }
  get fieldMappingSets(): ScopedFieldMappingSets {
    return (this.#fieldMappingSets ??= new ScopedFieldMappingSets(this));
  }
  /** SAML federation trust sources, with the metadata poller's columns and lease. */
  get trustSources(): ScopedTrustSources {
    return (this.#trustSources ??= new ScopedTrustSources(this));
  }
  get notificationStates(): ScopedNotificationStates {
    return (this.#notificationStates ??= new ScopedNotificationStates(this));
  }
  /** Upstream OpenID providers the tenant's users may sign in through. */
  get upstreamIdps(): ScopedUpstreamIdps {
    return (this.#upstreamIdps ??= new ScopedUpstreamIdps(this));
  }
  /** Links of the tenant's users to upstream subjects, with the sealed upstream tokens. */
  get upstreamLinks(): ScopedUpstreamLinks {
    return (this.#upstreamLinks ??= new ScopedUpstreamLinks(this));
  }
  /** Pending upstream authorization requests of browsers signing in. */
  get upstreamLoginStates(): ScopedUpstreamLoginStates {
    return (this.#upstreamLoginStates ??= new ScopedUpstreamLoginStates(this));
  }
  /** The refresh side of the upstream identity links (lease, refreshed tokens, backoff). */
  get linkRefresh(): ScopedLinkRefresh {
    return (this.#linkRefresh ??= new ScopedLinkRefresh(this));
  }
  /** The tenant's own platform-plugin settings (the platform's are in PlatformPlugins). */
  get plugins(): ScopedPluginSettings {
    return (this.#plugins ??= new ScopedPluginSettings(this));
  }
  /** The entity inventories of the tenant's federation trust sources. */
  get federationEntities(): ScopedFederationEntities {
    return (this.#federationEntities ??= new ScopedFederationEntities(this));
  }
  /** Typed edges between two users of the tenant (the access graph). */
  get relationships(): ScopedRelationships {
    return (this.#relationships ??= new ScopedRelationships(this));
  }
  /** Approval requests with their steps, grants and notification attempts. */
  get approvals(): ScopedApprovals {
    return (this.#approvals ??= new ScopedApprovals(this));
  }
  /** Agent grants, their consent versions and the tokens issued under them (docs/agents.md). */
  get agentGrants(): ScopedAgentGrants {
    return (this.#agentGrants ??= new ScopedAgentGrants(this));
  }
  /** The users' passkeys (docs/passkeys.md). */
  get passkeys(): ScopedPasskeys {
    return (this.#passkeys ??= new ScopedPasskeys(this));
  }
  /** Tombstones of the passkeys the tenant removed: who may get the unknown-credential signal. */
  get passkeyTombstones(): ScopedPasskeyTombstones {
    return (this.#passkeyTombstones ??= new ScopedPasskeyTombstones(this));
  }
  /** Single-use WebAuthn registration and authentication challenges. */
  get webauthnChallenges(): ScopedWebauthnChallenges {
    return (this.#webauthnChallenges ??= new ScopedWebauthnChallenges(this));
  }
  /** A user's lifecycle moves: disable, end every session and family, erasure (docs/directory.md). */
  get userErasure(): ScopedUserErasure {
    return (this.#userErasure ??= new ScopedUserErasure(this));
  }
  /** The tenant's counts, and the offboarding purge of every row it owns (tenant-directory.ts). */
  get tenantData(): ScopedTenantData {
    return (this.#tenantData ??= new ScopedTenantData(this));
  }
  /** The directory's import and export: point reads and writes, the export's pages. */
  get userTransfer(): ScopedUserTransfer {
    return (this.#userTransfer ??= new ScopedUserTransfer(this));
  }
  /** The tenant's mail template overrides (docs/email.md, "Templates"). */
  get mailTemplates(): ScopedMailTemplates {
    return (this.#mailTemplates ??= new ScopedMailTemplates(this));
  }
  /** Read only: the permissions, roles and groups a token is issued from (docs/rbac.md). */
  get rbacGrants(): ScopedRbacGrants {
    return (this.#rbacGrants ??= new ScopedRbacGrants(this));
  }
  /** The permissions of the tenant's API resources (docs/rbac.md). */
  get resourcePermissions(): ScopedResourcePermissions {
    return (this.#resourcePermissions ??= new ScopedResourcePermissions(this));
  }
  /** Roles and their permissions (docs/rbac.md). */
  get roles(): ScopedRoles {
    return (this.#roles ??= new ScopedRoles(this));
  }
  /** Who holds which role: users, groups, clients (docs/rbac.md). */
  get roleAssignments(): ScopedRoleAssignments {
    return (this.#roleAssignments ??= new ScopedRoleAssignments(this));
  }
  /** Groups and their members (docs/rbac.md). */
  get groups(): ScopedGroups {
    return (this.#groups ??= new ScopedGroups(this));
  }
  /** The users as SCIM /Users reads and writes them (docs/scim.md). */
  get scimUsers(): ScopedScimUsers {
    return (this.#scimUsers ??= new ScopedScimUsers(this));
  }
  /** Dynamic registrations' records and initial access tokens (docs/registration.md). */
  get registrations(): ScopedRegistrations {
    return (this.#registrations ??= new ScopedRegistrations(this));
  }
}
