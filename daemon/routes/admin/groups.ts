/**
 * A tenant's groups and their members (docs/rbac.md): create, list (keyset, name
 * prefix), show with a strong ETag, PATCH under an optional If-Match, delete (409 while a SCIM
 * mapping set names the group), members add, list and remove (optionally revoking the user's
 * tokens), and a user's groups. The same records SCIM /Groups serves.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import {
  AddMembersInput,
  AddMembersResult,
  CreateGroupInput,
  DeleteGroupResult,
  groupId,
  GroupListQuery,
  GroupPage,
  GroupView,
  MemberListQuery,
  MemberPage,
  PatchGroupInput,
  RemoveMemberQuery,
  RemoveMemberResult,
  userId,
  UserGroupsView,
} from '../../../shared/schemas/groups.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { groupEtag } from '../../../shared/services/rbac/groups.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, ETAG_HEADER, type ApiRegistry, IF_MATCH_HEADER } from '../../openapi.js';
import { actorOf } from './directory.js';

const TenantParam = z.strictObject({ tenantId });
const GroupParams = z.strictObject({ tenantId, groupId });
const MemberParams = z.strictObject({ tenantId, groupId, userId });
const UserParams = z.strictObject({ tenantId, userId });
const e400 = { description: 'invalid input, naming the field', schema: ErrorObject };
const e404 = {
  description: "no such tenant, or no such group (or user) in it; another tenant's ids too",
  schema: ErrorObject,
};
const e409 = {
  description: 'the name (without regard to case) or external_id is taken in this tenant (conflict, naming the field)',
  schema: ErrorObject,
};

export function groupRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const common = {
    tags: ['admin: groups'],
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: bearer(deps, ADMIN_SCOPES),
    scopes: ADMIN_SCOPES,
  };
  const base = '/api/admin/tenants/:tenantId/groups';

  api.add(
    router,
    {
      method: 'post',
      path: base,
      summary: 'Create a group (flat: groups hold users, not groups); audited',
      ...common,
      params: TenantParam,
      body: CreateGroupInput,
      responses: {
        201: { description: 'the group, version 1, no members', schema: GroupView, headers: ETAG_HEADER },
        400: e400,
        ...bearerErrors('tenant'),
        404: { description: 'no such tenant', schema: ErrorObject },
        409: e409,
      },
    },
    async (ctx) => {
      const g = await deps.groups.create(ctx.state.guard.params.tenantId, ctx.state.guard.body, actorOf(ctx), {
        where: 'body',
      });
      ctx.status = 201;
      ctx.set('ETag', groupEtag(g.version));
      ctx.body = g;
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: base,
      summary: "List a tenant's groups, oldest first (created_at, id); name_prefix narrows, next_cursor continues",
      ...common,
      params: TenantParam,
      query: GroupListQuery,
      responses: {
        200: { description: 'one page of groups; next_cursor when there may be more', schema: GroupPage },
        400: { description: 'an invalid filter, limit or cursor, naming the parameter', schema: ErrorObject },
        ...bearerErrors('tenant'),
        404: { description: 'no such tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      ctx.body = await deps.groups.list(ctx.state.guard.params.tenantId, ctx.state.guard.query);
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: `${base}/:groupId`,
      summary: 'A group with its member count; the ETag header is what If-Match on PATCH and DELETE compares',
      ...common,
      params: GroupParams,
      responses: {
        200: { description: 'the group', schema: GroupView, headers: ETAG_HEADER },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const g = await deps.groups.get(ctx.state.guard.params.tenantId, ctx.state.guard.params.groupId);
      // A strong validator (RFC 9110 §8.8.3) for If-Match.
      ctx.set('ETag', groupEtag(g.version));
      ctx.body = g;
    },
  );

  api.add(
    router,
    {
      method: 'patch',
      path: `${base}/:groupId`,
      summary:
        "Change a group's display_name, description or external_id (null clears the last two). Optional " +
        'If-Match (the strong ETag from GET, or *): a mismatch is 412; the response carries the new ETag',
      ...common,
      params: GroupParams,
      body: PatchGroupInput,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'the group as GET shows it now', schema: GroupView, headers: ETAG_HEADER },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
        409: e409,
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, groupId: gid } = ctx.state.guard.params;
      const ifMatch = ctx.get('If-Match');
      const g = await deps.groups.update(tid, gid, ctx.state.guard.body, actorOf(ctx), ifMatch ? { ifMatch } : {});
      ctx.set('ETag', groupEtag(g.version));
      ctx.body = g;
    },
  );

  api.add(
    router,
    {
      method: 'delete',
      path: `${base}/:groupId`,
      summary:
        'Delete a group with its members and its role assignments, in one transaction, audited with the ' +
        'counts; refused while a SCIM field-mapping set names the group. Revokes no token already issued',
      ...common,
      params: GroupParams,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'what was deleted', schema: DeleteGroupResult },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
        409: {
          description: 'a SCIM field-mapping set names the group (group_in_use, naming the sets in mapping_sets)',
          schema: ErrorObject,
        },
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, groupId: gid } = ctx.state.guard.params;
      const ifMatch = ctx.get('If-Match');
      ctx.body = await deps.groups.delete(tid, gid, actorOf(ctx), ifMatch ? { ifMatch } : {});
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: `${base}/:groupId/members`,
      summary: "A group's members in user id order, with each user's email and name; next_cursor continues",
      ...common,
      params: GroupParams,
      query: MemberListQuery,
      responses: {
        200: { description: 'one page of members', schema: MemberPage },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const { tenantId: tid, groupId: gid } = ctx.state.guard.params;
      ctx.body = await deps.groups.members(tid, gid, ctx.state.guard.query);
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: `${base}/:groupId/members`,
      summary:
        'Add users to a group (1 to 1000 ids; one already a member is left as it is). Every id must be a user ' +
        'of the tenant, else 400 unknown_users naming them and nothing is added; audited',
      ...common,
      params: GroupParams,
      body: AddMembersInput,
      responses: {
        200: { description: 'how many were added', schema: AddMembersResult },
        400: {
          description: 'invalid input, or ids that are no user of the tenant (unknown_users)',
          schema: ErrorObject,
        },
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const { tenantId: tid, groupId: gid } = ctx.state.guard.params;
      ctx.body = await deps.groups.addMembers(tid, gid, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'delete',
      path: `${base}/:groupId/members/:userId`,
      summary:
        'Remove a user from a group; audited. Tokens already issued stay valid (the next refresh gets the ' +
        'reduced permissions) unless revoke_tokens=true, which signs the user out everywhere',
      ...common,
      params: MemberParams,
      query: RemoveMemberQuery,
      responses: {
        200: { description: 'whether the user was a member, and the token families ended', schema: RemoveMemberResult },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const { tenantId: tid, groupId: gid, userId: uid } = ctx.state.guard.params;
      const revoke = ctx.state.guard.query.revoke_tokens === 'true';
      ctx.body = await deps.groups.removeMember(tid, gid, uid, actorOf(ctx), revoke);
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants/:tenantId/users/:userId/groups',
      summary: 'The groups a user is a member of, by name (one indexed read: groups are flat)',
      ...common,
      params: UserParams,
      responses: {
        200: { description: "the user's groups", schema: UserGroupsView },
        400: e400,
        ...bearerErrors('tenant'),
        404: { description: "no such user in the tenant (another tenant's user too)", schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, userId: uid } = ctx.state.guard.params;
      ctx.body = await deps.groups.ofUser(tid, uid);
    },
  );

  return router;
}
