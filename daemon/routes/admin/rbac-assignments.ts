/**
 * Role assignments (docs/rbac.md, "Rules"), on the router of rbac.ts: list, assign
 * (idempotent: 201 when added, 200 when the principal held it), unassign (idempotent; with
 * `?revoke_tokens=true` a user is signed out everywhere), and a user's effective roles.
 */
import type Router from '@koa/router';
import {
  AssignmentInput,
  AssignmentListQuery,
  AssignmentPage,
  AssignmentParams,
  AssignmentView,
  EffectiveRoles,
  RoleParams,
  RoleUserParams,
  UnassignQuery,
  UnassignResult,
} from '../../../shared/schemas/rbac.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const base = '/api/admin/tenants/:tenantId';
const errors = {
  ...bearerErrors('tenant'),
  404: { description: "no such tenant, role or user in it (another tenant's id too)", schema: ErrorObject },
};

export function assignmentRoutes(router: Router<AppState>, deps: AppDeps, api: ApiRegistry): void {
  const common = {
    tags: ['admin: roles and permissions'],
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: bearer(deps, ADMIN_SCOPES),
    scopes: ADMIN_SCOPES,
  };
  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: `${base}/roles/:roleId/assignments`,
      summary: "The role's holders in (principal_type, principal_id) order; ?principal_type= narrows",
      params: RoleParams,
      query: AssignmentListQuery,
      responses: {
        200: { description: 'one page; next_cursor when there may be more', schema: AssignmentPage },
        400: { description: 'an invalid parameter, naming it', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId, roleId } = ctx.state.guard.params;
      ctx.body = await deps.rbac.assignments.list(tenantId, roleId, ctx.state.guard.query);
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'post',
      path: `${base}/roles/:roleId/assignments`,
      summary:
        'Assign the role to a user, a group or a client_credentials client (by client_id) of the tenant; idempotent',
      params: RoleParams,
      body: AssignmentInput,
      responses: {
        200: { description: 'the principal held the role already (nothing written)', schema: AssignmentView },
        201: { description: 'assigned', schema: AssignmentView },
        400: {
          description:
            'invalid input; no such user, group or client in the tenant (principal_not_found); a client without ' +
            'the client_credentials grant (client_credentials_required)',
          schema: ErrorObject,
        },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId, roleId } = ctx.state.guard.params;
      const r = await deps.rbac.assignments.assign(tenantId, roleId, ctx.state.guard.body, actorOf(ctx), 'body');
      ctx.status = r.created ? 201 : 200;
      ctx.body = r.assignment;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'delete',
      path: `${base}/roles/:roleId/assignments/:principalType/:principalId`,
      summary:
        'Remove the role from a principal (idempotent). Nothing already issued is revoked (the next refresh gets ' +
        'the reduced scope) unless revoke_tokens=true: the user is signed out everywhere',
      params: AssignmentParams,
      query: UnassignQuery,
      responses: {
        200: { description: 'removed, or there was nothing to remove (removed: false)', schema: UnassignResult },
        400: { description: 'an invalid parameter; revoke_tokens on a group or a client', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId, roleId, principalType, principalId } = ctx.state.guard.params;
      ctx.body = await deps.rbac.assignments.unassign(
        tenantId,
        roleId,
        { type: principalType, id: principalId },
        actorOf(ctx),
        { revokeTokens: ctx.state.guard.query.revoke_tokens === 'true' },
      );
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: `${base}/users/:userId/roles`,
      summary: "A user's effective roles: held directly and through groups, each with its permissions and `via`",
      params: RoleUserParams,
      responses: {
        200: { description: 'the roles', schema: EffectiveRoles },
        400: { description: 'an invalid id', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId, userId } = ctx.state.guard.params;
      ctx.body = await deps.rbac.assignments.effectiveRoles(tenantId, userId);
    },
  );
}
