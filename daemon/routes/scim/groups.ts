/**
 * SCIM /Groups (RFC 7644 §3; docs/scim.md): the service's groups, one record with the
 * admin API's. Members are user ids; a group of more than 1,000 members is rendered without
 * `members` (the documented large-group rule); PATCH of members inserts and deletes rows.
 */
import type Router from '@koa/router';
import { z } from 'zod';
import { GROUP_TYPE, listResponse, parseListQuery, parseProjection } from '../../../shared/services/scim/index.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import {
  E404,
  E409,
  E412,
  ok,
  SCIM_ERRORS,
  SCIM_ETAG,
  SCIM_IF_MATCH,
  SCIM_IF_NONE_MATCH,
  SCIM_LOCATION,
  SCIM_PREFIX,
  scimActor,
  scimBase,
  scimDeclaration,
  send,
  sendResource,
} from './common.js';

const IdParam = z.strictObject({ id: z.string().min(1).max(200) });
const Projection = {
  attributes: z.string().max(2048).optional(),
  excludedAttributes: z.string().max(2048).optional(),
};
const ListQuery = z.strictObject({
  filter: z.string().max(8192).optional(),
  startIndex: z.string().max(20).optional(),
  count: z.string().max(20).optional(),
  sortBy: z.string().max(200).optional(),
  sortOrder: z.string().max(20).optional(),
  ...Projection,
});
const ProjectionQuery = z.strictObject(Projection);
const E409_DELETE = {
  ...E409,
  description: 'a SCIM field-mapping set names the group (docs/rbac.md, "Deleting a group")',
};

export function scimGroupRoutes(deps: AppDeps, api: ApiRegistry, router: Router<AppState>): void {
  const d = scimDeclaration(deps);
  const base = scimBase(deps);
  const path = `${SCIM_PREFIX}/Groups`;
  const projectionOf = (q: { attributes?: string; excludedAttributes?: string }) =>
    parseProjection(GROUP_TYPE, q.attributes, q.excludedAttributes);

  api.add(
    router,
    {
      ...d,
      method: 'get',
      path,
      operationId: 'scimListGroups',
      summary:
        'List groups (RFC 7644 §3.4.2): filter (id, displayName, externalId eq and members[value eq] from an ' +
        'index; any other filter by a scan), startIndex, count, attributes, excludedAttributes',
      query: ListQuery,
      responses: { 200: ok('a ListResponse of groups'), ...SCIM_ERRORS },
    },
    async (ctx) => {
      const q = parseListQuery(GROUP_TYPE, ctx.state.guard.query);
      const { total, page } = await deps.groups.scim.list(ctx.state.tenant, q, base);
      send(ctx, 200, listResponse(page, total, q.startIndex));
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'post',
      path,
      operationId: 'scimCreateGroup',
      summary: 'Create a group (RFC 7644 §3.3): displayName required and unique without case, members optional',
      query: ProjectionQuery,
      responses: { 201: ok('the group', SCIM_LOCATION), ...SCIM_ERRORS, 409: E409 },
    },
    async (ctx) => {
      const g = await deps.groups.scim.create(ctx.state.tenant, ctx.request.body, scimActor(ctx), base);
      sendResource(ctx, 201, g, { created: true });
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'get',
      path: `${path}/:id`,
      operationId: 'scimGetGroup',
      summary: 'A group (RFC 7644 §3.4.1); members left out above 1,000 members (docs/scim.md); If-None-Match: 304',
      params: IdParam,
      query: ProjectionQuery,
      headers: [SCIM_IF_NONE_MATCH],
      responses: { 200: ok('the group', SCIM_ETAG), 304: { description: 'not modified' }, ...SCIM_ERRORS, 404: E404 },
    },
    async (ctx) => {
      const { id } = ctx.state.guard.params;
      const g = await deps.groups.scim.get(ctx.state.tenant, id, base, projectionOf(ctx.state.guard.query));
      sendResource(ctx, 200, g);
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'put',
      path: `${path}/:id`,
      operationId: 'scimReplaceGroup',
      summary: 'Replace a group (RFC 7644 §3.5.1): displayName, externalId and the whole member set; If-Match',
      params: IdParam,
      query: ProjectionQuery,
      headers: [SCIM_IF_MATCH],
      responses: { 200: ok('the group', SCIM_ETAG), ...SCIM_ERRORS, 404: E404, 409: E409, 412: E412 },
    },
    async (ctx) => {
      const { id } = ctx.state.guard.params;
      const ifMatch = ctx.get('If-Match') || undefined;
      const g = await deps.groups.scim.replace(ctx.state.tenant, id, ctx.request.body, scimActor(ctx), base, ifMatch);
      sendResource(ctx, 200, g);
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'patch',
      path: `${path}/:id`,
      operationId: 'scimPatchGroup',
      summary:
        'Modify a group (RFC 7644 §3.5.2): add/replace/remove with and without path; members added and removed ' +
        'row by row (members[value eq "…"], or a value array); If-Match',
      params: IdParam,
      query: ProjectionQuery,
      headers: [SCIM_IF_MATCH],
      responses: { 200: ok('the group', SCIM_ETAG), ...SCIM_ERRORS, 404: E404, 409: E409, 412: E412 },
    },
    async (ctx) => {
      const { id } = ctx.state.guard.params;
      const ifMatch = ctx.get('If-Match') || undefined;
      const g = await deps.groups.scim.patch(ctx.state.tenant, id, ctx.request.body, scimActor(ctx), base, ifMatch);
      sendResource(ctx, 200, g);
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'delete',
      path: `${path}/:id`,
      operationId: 'scimDeleteGroup',
      summary: 'Delete a group with its memberships and role assignments (RFC 7644 §3.6); If-Match',
      params: IdParam,
      headers: [SCIM_IF_MATCH],
      responses: {
        204: { description: 'deleted' },
        ...SCIM_ERRORS,
        404: E404,
        409: E409_DELETE,
        412: E412,
      },
    },
    async (ctx) => {
      const ifMatch = ctx.get('If-Match') || undefined;
      await deps.groups.scim.delete(ctx.state.tenant, ctx.state.guard.params.id, scimActor(ctx), ifMatch);
      ctx.status = 204;
    },
  );
}
