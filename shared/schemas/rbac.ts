/**
 * API resource permissions, roles and role assignments (docs/rbac.md): the admin API's request
 * and response shapes, snake_case like the users API. The service's views are the types
 * inferred from these (docs/architecture.md, "Shapes").
 */
import { z } from 'zod';
import { scopeToken, tenantId } from './common.js';

/** Ids of this area's rows and of the principals: letters, digits, `_` and `-` (a client_id too). */
const rowId = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be an id');
/** A resource identifier (RFC 8707 §2) as one of the tenant's clients registers it. */
const resource = z.string().min(1).max(512);
const description = z.string().trim().max(500).nullable().optional();
const limit = z.coerce.number().int().min(1).max(1000).optional().describe('at most this many (default 100)');
const cursor = z.string().min(1).max(512).optional().describe('next_cursor of the previous page');
const nextCursor = z.string().optional().describe('present when there may be more: pass it back as cursor');

export const RBAC_PAGE_DEFAULT = 100;
export const PRINCIPAL_TYPES = ['user', 'group', 'client'] as const;
export type PrincipalType = (typeof PRINCIPAL_TYPES)[number];

export const RbacTenantParam = z.strictObject({ tenantId });
export const PermissionParams = z.strictObject({ tenantId, permissionId: rowId });
export const RoleParams = z.strictObject({ tenantId, roleId: rowId });
export const RoleUserParams = z.strictObject({ tenantId, userId: rowId });
export const AssignmentParams = z.strictObject({
  tenantId,
  roleId: rowId,
  principalType: z.enum(PRINCIPAL_TYPES),
  principalId: z.string().min(1).max(128),
});

// ---- permissions ----------------------------------------------------------------------------

export const PermissionInput = z.strictObject({
  resource: resource.describe("a resource identifier of one of the tenant's clients (resource_identifiers)"),
  permission: scopeToken
    .min(1)
    .describe('a scope token (RFC 6749 §3.3), e.g. invoices:read; not a protocol or admin scope'),
  description,
});
export type PermissionInput = z.output<typeof PermissionInput>;

export const PermissionFields = z.object({
  id: z.string(),
  resource: z.string(),
  permission: z.string(),
  description: z.string().nullable(),
  created_at: z.number().int(),
});
export const PermissionView = PermissionFields.loose();
export type PermissionView = z.output<typeof PermissionFields>;

export const PermissionListQuery = z.strictObject({
  resource: resource.optional().describe('only the permissions of this resource'),
  limit,
  cursor,
});
export const PermissionPage = z.object({ permissions: z.array(PermissionView), next_cursor: nextCursor });

/** A permission as a role lists it. */
export const PermissionRef = z.object({ id: z.string(), resource: z.string(), permission: z.string() });
export type PermissionRef = z.output<typeof PermissionRef>;

// ---- roles ----------------------------------------------------------------------------------

const roleName = z.string().trim().min(1, 'must not be empty').max(100);

export const RoleInput = z.strictObject({
  name: roleName.describe('unique in the tenant (compared as written)'),
  description,
  resource: resource
    .nullable()
    .optional()
    .describe('only permissions of this resource may be added; absent or null: tenant-wide'),
});
export type RoleInput = z.output<typeof RoleInput>;

export const RolePatchInput = z
  .strictObject({ name: roleName.optional(), description, resource: resource.nullable().optional() })
  .refine((v) => Object.keys(v).length > 0, { message: 'name at least one field to change' });
export type RolePatchInput = z.output<typeof RolePatchInput>;

export const RoleFields = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  resource: z.string().nullable(),
  version: z.number().int(),
  permissions: z.array(PermissionRef),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export const RoleView = RoleFields.loose();
export type RoleView = z.output<typeof RoleFields>;

export const RoleListQuery = z.strictObject({ limit, cursor });
export const RolePage = z.object({ roles: z.array(RoleView), next_cursor: nextCursor });

/** One permission of a PUT: its id, or its (resource, permission) pair. */
export const PermissionSelector = z.union([rowId, z.strictObject({ resource, permission: scopeToken.min(1) })]);
export type PermissionSelector = z.output<typeof PermissionSelector>;

export const RolePermissionsInput = z.strictObject({
  permissions: z.array(PermissionSelector).max(500, 'must list at most 500 permissions'),
});
export type RolePermissionsInput = z.output<typeof RolePermissionsInput>;

// ---- assignments ----------------------------------------------------------------------------

export const AssignmentInput = z.strictObject({
  principal_type: z.enum(PRINCIPAL_TYPES),
  principal_id: z.string().min(1).max(128).describe("a user id, a group id, or a client's client_id"),
});
export type AssignmentInput = z.output<typeof AssignmentInput>;

export const AssignmentFields = z.object({
  role_id: z.string(),
  principal_type: z.enum(PRINCIPAL_TYPES),
  principal_id: z.string(),
  created_at: z.number().int(),
});
export const AssignmentView = AssignmentFields.loose();
export type AssignmentView = z.output<typeof AssignmentFields>;

export const AssignmentListQuery = z.strictObject({
  principal_type: z.enum(PRINCIPAL_TYPES).optional().describe('only the assignments to this kind of principal'),
  limit,
  cursor,
});
export const AssignmentPage = z.object({ assignments: z.array(AssignmentView), next_cursor: nextCursor });

export const UnassignQuery = z.strictObject({
  revoke_tokens: z
    .enum(['true', 'false'])
    .optional()
    .describe('true (a user only): sign the user out everywhere, every token family revoked, once it is removed'),
});

export const UnassignResult = z
  .object({
    role_id: z.string(),
    principal_type: z.enum(PRINCIPAL_TYPES),
    principal_id: z.string(),
    removed: z.boolean().describe('false when there was no such assignment (the call is idempotent)'),
    sessions_ended: z.number().int().optional(),
    families_revoked: z.number().int().optional(),
  })
  .loose();
export type UnassignResult = z.output<typeof UnassignResult>;

// ---- a user's effective roles -----------------------------------------------------------------

export const EffectiveRole = z.object({
  id: z.string(),
  name: z.string(),
  resource: z.string().nullable(),
  permissions: z.array(PermissionRef),
  via: z.array(z.string()).describe('`direct`, and the ids of the groups through which the user holds it'),
});
export const EffectiveRoles = z.object({ user_id: z.string(), roles: z.array(EffectiveRole.loose()) }).loose();
export type EffectiveRoles = { user_id: string; roles: z.output<typeof EffectiveRole>[] };
