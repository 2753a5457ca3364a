/**
 * What the RBAC services share (docs/rbac.md): the tenant check, the field-naming 400, the
 * role's ETag, the paging cursors, and the rule of which scope tokens may be permissions.
 */
import { ApiError, notFound } from '../../errors.js';
import { TenantRepository, TenantScope, type RolePermissionRow, type RoleRow } from '../../repositories/index.js';
import type { Database } from '../../db/index.js';
import type { Actor } from '../audit.js';
import { isAdminScope } from '../../scopes.js';
import { RBAC_PAGE_DEFAULT, type RoleView } from '../../schemas/rbac.js';

/**
 * Scope tokens a permission may not be: the OpenID Connect and protocol scopes this server
 * gives a meaning of its own (OIDC Core §5.4, §11; `account`, docs/scopes.md) and the admin
 * scopes (`iam.*`, `scim`). A permission is granted through roles; these are granted by
 * consent or registration, and a role must never hand one out.
 */
const RESERVED_SCOPES = new Set([
  'openid',
  'profile',
  'email',
  'address',
  'phone',
  'offline_access',
  'account',
  'scim',
]);

/** Why `permission` may not be a permission, or undefined when it may (compared lower-cased). */
export function reservedScopeProblem(permission: string): string | undefined {
  const p = permission.toLowerCase();
  if (RESERVED_SCOPES.has(p) || p.startsWith('iam.') || isAdminScope(permission))
    return `"${permission}" is a protocol or admin scope, which a role cannot grant`;
  return undefined;
}

/** `body.resource` on the admin API (where `body`), `resource` at the CLI (where ''), whose flags name the fields. */
export const at = (where: string, name: string) => (where ? `${where}.${name}` : name);

/** A 400 naming the field (`body.resource`, `body.permissions.2`), with its code. */
export function fieldError(status: number, code: string, field: string, message: string): ApiError {
  return new ApiError(status, code, `${field}: ${message}`, { details: [{ field, message }] });
}

export async function requireTenant(db: Database, tenantId: string): Promise<void> {
  if (!(await new TenantRepository(db).get(tenantId))) throw notFound(`Tenant ${tenantId}`);
}

export const roleNotFound = (tenantId: string, roleId: string) =>
  new ApiError(404, 'not_found', `Role ${roleId} was not found in tenant ${tenantId}.`);

/** The role's strong ETag (RFC 9110 §8.8.3): its version, raised by every change of it or its permissions. */
export const roleEtag = (version: number) => `"v${version}"`;

export function roleView(r: RoleRow, perms: RolePermissionRow[]): RoleView {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    resource: r.resource,
    version: r.version,
    permissions: perms
      .filter((p) => p.role_id === r.id)
      .map((p) => ({ id: p.id, resource: p.resource, permission: p.permission })),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** The role as GET shows it; 404 when it is not the tenant's. */
export async function loadRole(scope: TenantScope, roleId: string, forUpdate = false): Promise<RoleRow> {
  const r = await scope.roles.get(roleId, { forUpdate });
  if (!r) throw roleNotFound(scope.tenantId, roleId);
  return r;
}

/** The page size asked for, within bounds. */
export const pageSize = (limit: number | undefined) => Math.min(Math.max(limit ?? RBAC_PAGE_DEFAULT, 1), 1000);

/** A cursor naming a row deleted since its page was served. */
export const staleCursor = () =>
  fieldError(400, 'invalid_request', 'query.cursor', 'the row this cursor resumes after was deleted: list again');

/** What the RBAC services call in other areas (the container passes them, shared/container.ts). */
export interface RbacDeps {
  /** The SCIM mapping sets naming a role (deps.fieldMapping.mappingSets.naming). */
  mappingSetsNaming(tenantId: string, kind: 'role', name: string): Promise<{ id: string; setKey: string }[]>;
  /** Signs the user out everywhere: every session and token family (UserLifecycleService.signOut). */
  signOut(
    tenantId: string,
    userId: string,
    actor: Actor,
  ): Promise<{ sessions_ended: number; families_revoked: number }>;
}
