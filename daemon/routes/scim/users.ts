/**
 * SCIM /Users (RFC 7644 §3; docs/scim.md, "Users"): the directory's users, one record. The
 * bodies are read by the SCIM body reader (common.ts) and checked by the SCIM layer against
 * the User schema, not by a zod body schema: their errors are SCIM's (scimType), and the
 * schema a client reads is /scim/v2/Schemas.
 */
import type Router from '@koa/router';
import { z } from 'zod';
import { parseProjection, project, USER_TYPE } from '../../../shared/services/scim/index.js';
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

/** The list parameters (RFC 7644 §3.4.2); checked by the SCIM layer (invalidFilter, invalidValue). */
const ListQuery = z.object({
  filter: z.string().optional().describe('RFC 7644 §3.4.2.2 filter, e.g. userName eq "bjensen"'),
  startIndex: z.string().max(12).optional().describe('1-based index of the first result (default 1)'),
  count: z.string().max(12).optional().describe('results per page: default 100, at most 200'),
  attributes: z.string().max(2048).optional(),
  excludedAttributes: z.string().max(2048).optional(),
  sortBy: z.string().max(200).optional().describe('ignored: sorting is not supported (ServiceProviderConfig)'),
  sortOrder: z.string().max(20).optional().describe('ignored'),
});
const IdParam = z.strictObject({ id: z.string().min(1).max(64) });
const ProjectionQuery = z.object({
  attributes: z.string().max(2048).optional(),
  excludedAttributes: z.string().max(2048).optional(),
});

export function scimUserRoutes(deps: AppDeps, api: ApiRegistry, router: Router<AppState>): void {
  const d = scimDeclaration(deps);
  const base = scimBase(deps);
  const path = `${SCIM_PREFIX}/Users`;
  const ifMatch = (h: string) => (h ? { ifMatch: h } : {});

  api.add(
    router,
    {
      ...d,
      method: 'get',
      path,
      operationId: 'scimListUsers',
      summary: 'List users (RFC 7644 §3.4.2): filter, startIndex, count, attributes, excludedAttributes',
      query: ListQuery,
      responses: { 200: ok('a ListResponse'), ...SCIM_ERRORS },
    },
    async (ctx) => send(ctx, 200, await deps.scim.users.list(ctx.state.tenant, ctx.state.guard.query, base)),
  );

  api.add(
    router,
    {
      ...d,
      method: 'post',
      path: `${path}/.search`,
      operationId: 'scimSearchUsers',
      summary: 'List users with the parameters in a SearchRequest body (RFC 7644 §3.4.3)',
      responses: { 200: ok('a ListResponse'), ...SCIM_ERRORS },
    },
    async (ctx) => {
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      const q: Record<string, unknown> = { ...body };
      for (const k of ['attributes', 'excludedAttributes'])
        if (Array.isArray(body[k])) q[k] = (body[k] as unknown[]).map(String).join(',');
      send(ctx, 200, await deps.scim.users.list(ctx.state.tenant, q, base));
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'get',
      path: `${path}/:id`,
      operationId: 'scimGetUser',
      summary: 'A user (RFC 7644 §3.4.1); If-None-Match with its current ETag is 304',
      params: IdParam,
      query: ProjectionQuery,
      headers: [SCIM_IF_NONE_MATCH],
      responses: { 200: ok('the user', SCIM_ETAG), 304: { description: 'not modified' }, ...SCIM_ERRORS, 404: E404 },
    },
    async (ctx) => {
      const r = await deps.scim.users.get(ctx.state.tenant, ctx.state.guard.params.id, base);
      const p = parseProjection(USER_TYPE, ctx.state.guard.query.attributes, ctx.state.guard.query.excludedAttributes);
      const shown = project(USER_TYPE, r, p);
      sendResource(ctx, 200, { ...shown, meta: r.meta });
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'post',
      path,
      operationId: 'scimCreateUser',
      summary: 'Create a user (RFC 7644 §3.3): 201 with Location and ETag; userName, externalId, email unique (409)',
      responses: { 201: ok('the new user', SCIM_LOCATION), ...SCIM_ERRORS, 409: E409 },
    },
    async (ctx) => {
      const r = await deps.scim.users.create(ctx.state.tenant, ctx.request.body, base, scimActor(ctx));
      sendResource(ctx, 201, r, { created: true });
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'put',
      path: `${path}/:id`,
      operationId: 'scimReplaceUser',
      summary: 'Replace a user (RFC 7644 §3.5.1); optional If-Match (412 on mismatch)',
      params: IdParam,
      headers: [SCIM_IF_MATCH],
      responses: { 200: ok('the user', SCIM_ETAG), ...SCIM_ERRORS, 404: E404, 409: E409, 412: E412 },
    },
    async (ctx) => {
      const o = { base, actor: scimActor(ctx), ...ifMatch(ctx.get('If-Match')) };
      sendResource(
        ctx,
        200,
        await deps.scim.users.replace(ctx.state.tenant, ctx.state.guard.params.id, ctx.request.body, o),
      );
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'patch',
      path: `${path}/:id`,
      operationId: 'scimPatchUser',
      summary: 'Modify a user (RFC 7644 §3.5.2): add, replace, remove (any case); optional If-Match (412)',
      params: IdParam,
      headers: [SCIM_IF_MATCH],
      responses: { 200: ok('the user', SCIM_ETAG), ...SCIM_ERRORS, 404: E404, 409: E409, 412: E412 },
    },
    async (ctx) => {
      const o = { base, actor: scimActor(ctx), ...ifMatch(ctx.get('If-Match')) };
      sendResource(
        ctx,
        200,
        await deps.scim.users.patch(ctx.state.tenant, ctx.state.guard.params.id, ctx.request.body, o),
      );
    },
  );

  api.add(
    router,
    {
      ...d,
      method: 'delete',
      path: `${path}/:id`,
      operationId: 'scimDeleteUser',
      summary:
        "Delete a user (RFC 7644 §3.6): erased, or disabled when the tenant's scim_delete is deactivate; " +
        'optional If-Match',
      params: IdParam,
      headers: [SCIM_IF_MATCH],
      responses: { 204: { description: 'deleted (or deactivated)' }, ...SCIM_ERRORS, 404: E404, 412: E412 },
    },
    async (ctx) => {
      const o = { base, actor: scimActor(ctx), ...ifMatch(ctx.get('If-Match')) };
      await deps.scim.users.delete(ctx.state.tenant, ctx.state.guard.params.id, o);
      ctx.status = 204;
    },
  );
}
