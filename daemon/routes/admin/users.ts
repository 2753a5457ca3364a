/**
 * A tenant's users after creation (docs/directory.md, "Users: read, search, edit"): the list
 * and its search (signed keyset cursors over (created_at, id), as the audit list pages), one
 * user with a strong ETag, and PATCH under an optional If-Match. Creating a user stays with the
 * rest of the directory's creates (directory.ts).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { PatchUserInput, UserDetailView, UserListQuery, UserPage } from '../../../shared/schemas/users.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, ETAG_HEADER, type ApiRegistry, IF_MATCH_HEADER } from '../../openapi.js';
import { actorOf } from './directory.js';

const UserParams = z.strictObject({
  tenantId,
  userId: z
    .string()
    .min(1)
    .max(40)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be a user id'),
});
const TenantParam = z.strictObject({ tenantId });
const e400 = { description: 'invalid input, naming the field', schema: ErrorObject };
const e404 = { description: "no such tenant, or no such user in it (another tenant's user too)", schema: ErrorObject };

export function userRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const tags = ['admin: directory'];
  const common = {
    tags,
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: auth,
    scopes: ADMIN_SCOPES,
  };

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants/:tenantId/users',
      summary:
        "List and search a tenant's users, oldest first (created_at, id); filters narrow the page, next_cursor " +
        'continues it',
      ...common,
      params: TenantParam,
      query: UserListQuery,
      responses: {
        200: { description: 'one page of users; next_cursor when there may be more', schema: UserPage },
        400: { description: 'an invalid filter, limit, offset or cursor, naming the parameter', schema: ErrorObject },
        ...bearerErrors('tenant'),
        404: { description: 'no such tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      ctx.body = await deps.userDirectory.list(ctx.state.guard.params.tenantId, ctx.state.guard.query);
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants/:tenantId/users/:userId',
      summary:
        'A user, with its last sign-in, linked upstream identities, passkey count and custom claim values; ' +
        'the ETag header is what If-Match on PATCH compares',
      ...common,
      params: UserParams,
      responses: {
        200: { description: 'the user', schema: UserDetailView, headers: ETAG_HEADER },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const { tenantId: tid, userId } = ctx.state.guard.params;
      const { user, etag } = await deps.userDirectory.get(tid, userId);
      // A strong validator (RFC 9110 §8.8.3) for If-Match on PATCH.
      ctx.set('ETag', etag);
      ctx.body = user;
    },
  );

  api.add(
    router,
    {
      method: 'patch',
      path: '/api/admin/tenants/:tenantId/users/:userId',
      summary:
        "Edit a user's name, email (unverified and the old address told, unless email_verified: true), " +
        'email_verified and custom claim values (merged; null clears). Optional If-Match (a strong ETag ' +
        'from GET, or *): a mismatch is 412; the response carries the new ETag',
      ...common,
      params: UserParams,
      body: PatchUserInput,
      // Read by the handler below; declared here so /openapi.json lists it (RouteSpec.headers).
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'the user as GET shows it now', schema: UserDetailView, headers: ETAG_HEADER },
        400: {
          description: 'invalid input naming the field, or a refused claim value (as PUT …/claims)',
          schema: ErrorObject,
        },
        ...bearerErrors('tenant'),
        404: e404,
        409: { description: 'the address is taken in this tenant (conflict, field email)', schema: ErrorObject },
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, userId } = ctx.state.guard.params;
      const ifMatch = ctx.get('If-Match');
      const { user, etag } = await deps.userDirectory.update(tid, userId, ctx.state.guard.body, actorOf(ctx), {
        where: 'body',
        ...(ifMatch ? { ifMatch } : {}),
      });
      ctx.set('ETag', etag);
      ctx.body = user;
    },
  );

  return router;
}
