/**
 * Admin scopes. The full table of which endpoint needs which scope is docs/scopes.md.
 * - iam.platform: a platform operator; acts on every tenant.
 * - iam.admin: a tenant administrator; confined to the tenant its client belongs to.
 */
export const SCOPE_PLATFORM = 'iam.platform';
export const SCOPE_TENANT_ADMIN = 'iam.admin';
/**
 * Every admin scope, the one list: a scope added here is at once refused on a client that has
 * any grant but client_credentials (shared/schemas/admin.ts), refused at /authorize, never
 * shown on the consent page, and accepted by the admin API only in a client_credentials token
 * (daemon/middleware/koa-bearer.ts). Admin callers are services, never end users
 * (docs/scopes.md).
 */
export const ADMIN_SCOPES = [SCOPE_PLATFORM, SCOPE_TENANT_ADMIN];

/** Whether `scope` is an admin scope (ADMIN_SCOPES). */
export function isAdminScope(scope: string): boolean {
  return ADMIN_SCOPES.includes(scope);
}
