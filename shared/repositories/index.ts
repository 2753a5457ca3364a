/**
 * The data layer's repositories, one file per area. Tenant-owned rows are reached only through
 * a TenantScope (scope.ts); platform-level rows (tenants, signing keys, …) have repositories of
 * their own; the few lookups that cross tenants are in lookups.ts. See docs/architecture.md.
 */
export { AuditWriter } from './audit.js';
export type { Page } from './common.js';
export { SigningKeyRepository } from './keys.js';
export { Lookups, type ResolvedClient } from './lookups.js';
export { OutboxRepository } from './outbox.js';
export { TenantScope } from './scope.js';
export { TenantRepository } from './tenants.js';
