/**
 * API resource permissions and roles (docs/rbac.md), under /api/admin/tenants/{tenantId}/:
 * permissions (create, list, delete) and roles (create, list, read with a strong ETag, PATCH
 * and the permissions PUT under an optional If-Match, delete). The assignments and a user's
 * effective roles are in rbac-assignments.ts, on the same router.
 */
import Router from '@koa/router';
import {
  PermissionInput,
  PermissionListQuery,
  PermissionPage,
  PermissionParams,
  PermissionView,
  RbacTenantParam,
  RoleInput,
  RoleListQuery,
  RolePage,
  RoleParams,
  RolePatchInput,
  RolePermissionsInput,
  RoleView,
} from '../../../shared/schemas/rbac.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, ETAG_HEADER, type ApiRegistry, IF_MATCH_HEADER } from '../../openapi.js';
import { actorOf } from './directory.js';
import { assignmentRoutes } from './rbac-assignments.js';

const base = '/api/admin/tenants/:tenantId';
const e404 = { description: "no such tenant, or no such row in it (another tenant's id too)", schema: ErrorObject };
const e412 = { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject };

export function rbacRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const common = {
    tags: ['admin: roles and permissions'],
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: bearer(deps, ADMIN_SCOPES),
    scopes: ADMIN_SCOPES,
  };
  const errors = { ...bearerErrors('tenant'), 404: e404 };
  const rbac = () => deps.rbac;

  api.add(
    router,
    {
      ...common,
      method: 'post',
      path: `${base}/permissions`,
      summary:
        "Create a permission (a scope token, e.g. invoices:read) of an API resource: one of the tenant's clients' " +
        'resource_identifiers',
      params: RbacTenantParam,
      body: PermissionInput,
      responses: {
        201: { description: 'the permission', schema: PermissionView },
        400: {
          description:
            "invalid input naming the field; the resource is no client's resource identifier " +
            '(resource_not_registered); ' +
            'a protocol or admin scope (reserved_permission)',
          schema: ErrorObject,
        },
        ...errors,
        409: { description: 'the resource has this permission (conflict, field permission)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      ctx.status = 201;
      ctx.body = await rbac().permissions.create(
        ctx.state.guard.params.tenantId,
        ctx.state.guard.body,
        actorOf(ctx),
        'body',
      );
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: `${base}/permissions`,
      summary: "The tenant's permissions in (resource, permission) order; ?resource= narrows to one resource",
      params: RbacTenantParam,
      query: PermissionListQuery,
      responses: {
        200: { description: 'one page; next_cursor when there may be more', schema: PermissionPage },
        400: { description: 'an invalid parameter, naming it', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      ctx.body = await rbac().permissions.list(ctx.state.guard.params.tenantId, ctx.state.guard.query);
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'delete',
      path: `${base}/permissions/:permissionId`,
      summary: 'Delete a permission no role holds',
      params: PermissionParams,
      responses: {
        204: { description: 'deleted' },
        400: { description: 'an invalid id', schema: ErrorObject },
        ...errors,
        409: { description: 'roles hold it (permission_in_use, `roles` names them)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId, permissionId } = ctx.state.guard.params;
      await rbac().permissions.delete(tenantId, permissionId, actorOf(ctx));
      ctx.status = 204;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'post',
      path: `${base}/roles`,
      summary: 'Create a role: tenant-wide, or scoped to one resource (then only its permissions may be added)',
      params: RbacTenantParam,
      body: RoleInput,
      responses: {
        201: { description: 'the role, without permissions', schema: RoleView, headers: ETAG_HEADER },
        400: {
          description: 'invalid input naming the field; a resource no client registers (resource_not_registered)',
          schema: ErrorObject,
        },
        ...errors,
        409: { description: 'the tenant has a role of this name (conflict, field name)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { role, etag } = await rbac().roles.create(
        ctx.state.guard.params.tenantId,
        ctx.state.guard.body,
        actorOf(ctx),
        'body',
      );
      ctx.set('ETag', etag);
      ctx.status = 201;
      ctx.body = role;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: `${base}/roles`,
      summary: "The tenant's roles in name order, each with its permissions",
      params: RbacTenantParam,
      query: RoleListQuery,
      responses: {
        200: { description: 'one page; next_cursor when there may be more', schema: RolePage },
        400: { description: 'an invalid parameter, naming it', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      ctx.body = await rbac().roles.list(ctx.state.guard.params.tenantId, ctx.state.guard.query);
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: `${base}/roles/:roleId`,
      summary: 'A role with its permissions; the ETag (its version) is what If-Match on PATCH and PUT compares',
      params: RoleParams,
      responses: {
        200: { description: 'the role', schema: RoleView, headers: ETAG_HEADER },
        400: { description: 'an invalid id', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId, roleId } = ctx.state.guard.params;
      const { role, etag } = await rbac().roles.get(tenantId, roleId);
      ctx.set('ETag', etag);
      ctx.body = role;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'patch',
      path: `${base}/roles/:roleId`,
      summary: "Change a role's name, description or resource; optional If-Match (a mismatch is 412)",
      params: RoleParams,
      body: RolePatchInput,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'the role as stored now, with its new ETag', schema: RoleView, headers: ETAG_HEADER },
        400: {
          description:
            'invalid input naming the field; a resource no client registers (resource_not_registered), or one ' +
            'that a permission of the role is not of (permission_resource_mismatch)',
          schema: ErrorObject,
        },
        ...errors,
        409: { description: 'the tenant has a role of this name (conflict, field name)', schema: ErrorObject },
        412: e412,
      },
    },
    async (ctx) => {
      const { tenantId, roleId } = ctx.state.guard.params;
      const ifMatch = ctx.get('If-Match');
      const { role, etag } = await rbac().roles.update(tenantId, roleId, ctx.state.guard.body, actorOf(ctx), {
        where: 'body',
        ...(ifMatch ? { ifMatch } : {}),
      });
      ctx.set('ETag', etag);
      ctx.body = role;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'put',
      path: `${base}/roles/:roleId/permissions`,
      summary:
        "Replace a role's permissions, each by id or by {resource, permission}; optional If-Match (a mismatch is 412)",
      params: RoleParams,
      body: RolePermissionsInput,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: {
          description: 'the role with its permissions now, and its new ETag',
          schema: RoleView,
          headers: ETAG_HEADER,
        },
        400: {
          description:
            'invalid input; a permission the tenant lacks (unknown_permission) or, on a role scoped to a resource, ' +
            'of another resource (permission_resource_mismatch), naming body.permissions.N',
          schema: ErrorObject,
        },
        ...errors,
        412: e412,
      },
    },
    async (ctx) => {
      const { tenantId, roleId } = ctx.state.guard.params;
      const ifMatch = ctx.get('If-Match');
      const { role, etag } = await rbac().roles.setPermissions(tenantId, roleId, ctx.state.guard.body, actorOf(ctx), {
        where: 'body',
        ...(ifMatch ? { ifMatch } : {}),
      });
      ctx.set('ETag', etag);
      ctx.body = role;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'delete',
      path: `${base}/roles/:roleId`,
      summary:
        'Delete a role with its permissions and its user and group assignments; refused while a client holds it or ' +
        'a SCIM mapping set names it. Revokes nothing already issued',
      params: RoleParams,
      responses: {
        204: { description: 'deleted' },
        400: { description: 'an invalid id', schema: ErrorObject },
        ...errors,
        409: {
          description: 'a client holds it or a SCIM mapping set names it (role_in_use; `clients`, `mapping_sets`)',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const { tenantId, roleId } = ctx.state.guard.params;
      await rbac().roles.delete(tenantId, roleId, actorOf(ctx));
      ctx.status = 204;
    },
  );

  assignmentRoutes(router, deps, api);
  return router;
}
