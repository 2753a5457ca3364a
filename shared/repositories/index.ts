/**
 * The data layer's repositories, one file per area. Tenant-owned rows are reached only through
 * a TenantScope (scope.ts); platform-level rows (tenants, signing keys, …) have repositories of
 * their own; the few lookups that cross tenants are in lookups.ts. See docs/architecture.md.
 */
export { ApprovalExpiryQueue, type ApprovalFilter } from './approvals.js';
export type {
  ApprovalGrantRow,
  ApprovalNotificationRow,
  ApprovalRequestRow,
  ApprovalStepRow,
} from './approval-rows.js';
export {
  AuditReader,
  AuditWriter,
  AuthHistoryHousekeeping,
  type AuditFilter,
  type AuthHistoryRow,
  type SignInFilter,
} from './audit.js';
export type { ClaimRenameRow, ClaimRenameState, RenameSchemaRow } from './claim-renames.js';
export type { ClientSecretRow } from './clients.js';
export type { ConsentListRow, ConsentRow } from './consents.js';
export type {
  CustomClaimSchemaRow,
  CustomClaimValueRow,
  EmittableClaimRow,
  ExportedClaimRow,
  SchemaPatch,
} from './custom-claims.js';
export {
  FRESH_POLLER_FIELDS,
  type PinnedCertificate,
  type PollerFields,
  type TrustSourceOperatorFields,
  type TrustSourceRow,
} from './federation.js';
export type { FieldMapping, FieldMappingSetRow, SourceProfileRow, SourceProfileVersionRow } from './field-mapping.js';
export type { NotificationFilter, NotificationStateRow } from './notification-states.js';
export type { MailTemplateRow, MailTemplateWrite } from './mail-templates.js';
export type { ResourcePermission } from './rbac-grants.js';
export {
  ExternalTokenRefreshRepository,
  type RefreshedTokens,
  type RefreshLinkRow,
  type RefreshRunRow,
} from './external-token-refresh.js';
export { ExportHousekeeping, type ExportCursor, type PagedExportSection } from './exports.js';
export type { Page } from './common.js';
export { IdempotencyRepository, type IdempotencyRow } from './idempotency.js';
export { JobLeaseRepository } from './jobs.js';
export { SigningKeyRepository } from './keys.js';
export { Lookups, policyVersionsOf, type PolicyVersions, type ResolvedClient } from './lookups.js';
export { ServiceMetaRepository } from './meta.js';
export { OperationLookups, type DueTrustSourceRef, type OperationRef } from './operation-lookups.js';
export type { ProvisioningEventRow, ProvisioningOperationRow, ProvisioningStepRow } from './provisioning.js';
export type { RecoveryOperationRow } from './recovery.js';
export type { LookupSource, PublicationRow, RouteRow } from './tenant-routes.js';
export { OutboxRepository } from './outbox.js';
export {
  PasskeyTombstoneHousekeeping,
  WebauthnChallengeHousekeeping,
  type PasskeyRow,
  type PasskeyTombstoneRow,
  type WebauthnChallengeRow,
} from './passkeys.js';
export {
  PLATFORM_SCOPE_KEY,
  PlatformPlugins,
  type PluginOperationRow,
  type PluginOperationState,
  type PluginSettingsRow,
} from './plugins.js';
export { DbRateLimiter, RateLimitHousekeeping, rateLimitKey } from './rate-limits.js';
export { DpopProofHousekeeping, DpopProofs } from './dpop.js';
export type { RelationshipListRow, RelationshipRow } from './relationships.js';
export type { AssignmentRow, PermissionRow, RolePermissionRow, RoleRow } from './rbac.js';
export type { GroupKeyset, GroupMemberRow, GroupRow } from './groups.js';
export { TenantScope } from './scope.js';
export { RegistrationLookups, type InitialAccessTokenRow, type RegistrationRow } from './registrations.js';
export type { LoginUser } from './users.js';
export type { LifecycleUser } from './user-erasure.js';
export { TenantRepository, type LifecycleJob, type TenantLifecycleRow } from './tenants.js';
export {
  TENANT_PURGE_TABLES,
  TENANT_ROWS_KEPT,
  TenantDirectoryRows,
  type TenantListFilter,
} from './tenant-directory.js';
export { type AuthCodeRow } from './authorization.js';
export { LoginHousekeeping, type ArtifactRow, type SessionRow } from './sessions.js';
export { TokenHousekeeping, type FamilyRow } from './tokens.js';
export {
  UpstreamLoginStateHousekeeping,
  type UpstreamIdpRow,
  type UpstreamIdpStatus,
  type UpstreamLoginStateRow,
} from './upstream-idps.js';
export {
  UpstreamLinkQueue,
  type SealedLinkTokens,
  type UpstreamLinkRow,
  type UpstreamLinkState,
} from './upstream-links.js';
export type { AgentGrantRow } from './agent-grants.js';
export { AgentGrantTokenHousekeeping } from './agent-grants.js';
export { ScopedUserTransfer, type TransferClaimValue, type TransferLink, type TransferUser } from './user-transfer.js';
export type { ScimUserRow, ScimUserWrite } from './scim-users.js';
export { ClientMetadataLookups } from './client-metadata.js';
export { PushedRequestLookup, type PushedRequestRow } from './pushed-requests.js';
