/**
 * Admin scopes. The full table of which endpoint needs which scope is docs/scopes.md.
 * - iam.platform: a platform operator; acts on every tenant.
 * - iam.admin: a tenant administrator; confined to the tenant its client belongs to.
 */
export const SCOPE_PLATFORM = 'iam.platform';
export const SCOPE_TENANT_ADMIN = 'iam.admin';
export const ADMIN_SCOPES = [SCOPE_PLATFORM, SCOPE_TENANT_ADMIN];
