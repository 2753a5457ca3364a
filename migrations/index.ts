/**
 * Every migration, in the order it applies. Both dialects run the same list; a migration that
 * differs between them asks `isMysql()` (see dialect.ts). Append new ones at the end.
 */
import { Core1763769600001 } from './0001-core.js';
import { JobsOutbox1763769600002 } from './0002-jobs-outbox.js';
import { Auth1763769600003 } from './0003-auth.js';
import { ResourceServers1763769600004 } from './0004-resource-servers.js';
import { DataExports1763769600005 } from './0005-data-exports.js';
import { IdempotencyLifecycle1763769600006 } from './0006-idempotency-lifecycle.js';
import { Provisioning1763769600007 } from './0007-provisioning.js';
import { Recovery1763769600008 } from './0008-recovery.js';
import { ReadIndexes1763769600009 } from './0009-read-indexes.js';
import { ErrorCauses1763769600010 } from './0010-error-causes.js';
import { Throttle1763769600011 } from './0011-throttle.js';
import { ClientLogo1763769600012 } from './0012-client-logo.js';
import { ClientAuth1763769600013 } from './0013-client-auth.js';
import { ClientOrigins1763769600014 } from './0014-client-origins.js';
import { CustomClaims1763769600015 } from './0015-custom-claims.js';
import { ClaimRenames1763769600016 } from './0016-claim-renames.js';
import { Plugins1763769600017 } from './0017-plugins.js';
import { UpstreamIdps1763769600018 } from './0018-upstream-idps.js';
import { ExternalTokenRefresh1763769600019 } from './0019-external-token-refresh.js';
import { Federation1763769600020 } from './0020-federation.js';
import { FederationEntities1763769600021 } from './0021-federation-entities.js';
import { Approvals1763769600022 } from './0022-approvals.js';
import { AgentGrants1763769600023 } from './0023-agent-grants.js';
import { Passkeys1763769600024 } from './0024-passkeys.js';
import { PasskeyTombstones1763769600027 } from './0027-passkey-tombstones.js';
import { ClientSigning1763769600030 } from './0030-client-signing.js';
import { UserStandardClaims1763769600031 } from './0031-user-standard-claims.js';
import { UserEmailVerified1763769600032 } from './0032-user-email-verified.js';
import { UserSearchIndexes1763769600033 } from './0033-user-search-indexes.js';
import { ClientSecrets1763769600036 } from './0036-client-secrets.js';
import { TenantOffboarding1763769600037 } from './0037-tenant-offboarding.js';
import { SignInHistory1763769600038 } from './0038-sign-in-history.js';
import { MailTemplates1763769600040 } from './0040-mail-templates.js';
import { GroupsRolesScim1763769600041 } from './0041-groups-roles-scim.js';
import { DynamicRegistration1763769600042 } from './0042-dynamic-registration.js';
import { ResourceMetadata1763769600044 } from './0044-resource-metadata.js';
import { PushedAuthorizationRequests1763769600045 } from './0045-pushed-authorization-requests.js';
import { Dpop1763769600046 } from './0046-dpop.js';
import { SignedResponses1763769600047 } from './0047-signed-responses.js';
import { FapiProfile1763769600048 } from './0048-fapi-profile.js';

export const migrations = [
  Core1763769600001,
  JobsOutbox1763769600002,
  Auth1763769600003,
  ResourceServers1763769600004,
  DataExports1763769600005,
  IdempotencyLifecycle1763769600006,
  Provisioning1763769600007,
  Recovery1763769600008,
  ReadIndexes1763769600009,
  ErrorCauses1763769600010,
  Throttle1763769600011,
  ClientLogo1763769600012,
  ClientAuth1763769600013,
  ClientOrigins1763769600014,
  CustomClaims1763769600015,
  ClaimRenames1763769600016,
  Plugins1763769600017,
  UpstreamIdps1763769600018,
  ExternalTokenRefresh1763769600019,
  Federation1763769600020,
  FederationEntities1763769600021,
  Approvals1763769600022,
  AgentGrants1763769600023,
  Passkeys1763769600024,
  PasskeyTombstones1763769600027,
  ClientSigning1763769600030,
  UserStandardClaims1763769600031,
  UserEmailVerified1763769600032,
  UserSearchIndexes1763769600033,
  ClientSecrets1763769600036,
  TenantOffboarding1763769600037,
  SignInHistory1763769600038,
  MailTemplates1763769600040,
  GroupsRolesScim1763769600041,
  DynamicRegistration1763769600042,
  ResourceMetadata1763769600044,
  PushedAuthorizationRequests1763769600045,
  Dpop1763769600046,
  SignedResponses1763769600047,
  FapiProfile1763769600048,
];
