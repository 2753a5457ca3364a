/**
 * The sign-in history for an operator (docs/directory.md, "Sign-in history"): a tenant's
 * sign-in attempts, or one user's, newest first, failures with their reason. The tenant is in
 * the path: a tenant admin reaches its own tenant, a platform admin any (route-declarations.ts);
 * a user of another tenant is 404. Keyset pagination over (created_at, id) descending with a
 * signed opaque cursor, as the audit log (audit.ts). Operator view: `iam sign-ins list`.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { SignInPage, SignInsQuery } from '../../../shared/schemas/sign-ins.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { SignInQuery } from '../../../shared/services/sign-ins.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';

const userId = z.string().min(1).max(40);

const filters = (q: z.infer<typeof SignInsQuery>): SignInQuery => ({
  result: q.result,
  method: q.method as SignInQuery['method'],
  clientId: q.client_id,
  ipPrefix: q.ip_prefix,
  since: q.since,
  until: q.until,
  limit: q.limit,
  cursor: q.cursor,
});

export function adminSignInRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const tags = ['admin: sign-in history'];
  const common = {
    method: 'get',
    tags,
    security: 'bearer',
    tenant: { path: 'tenantId' },
    authenticate: auth,
    scopes: ADMIN_SCOPES,
    query: SignInsQuery,
  } as const;
  const responses = (notFound: string) => ({
    200: { description: 'one page of sign-ins; next_cursor when there may be more', schema: SignInPage },
    400: { description: 'invalid filter, limit, cursor or path parameter; the message names it', schema: ErrorObject },
    ...bearerErrors('tenant'),
    404: { description: notFound, schema: ErrorObject },
  });

  api.add(
    router,
    {
      ...common,
      path: '/api/admin/tenants/:tenantId/sign-ins',
      summary: "The tenant's sign-in attempts, newest first (keyset pagination)",
      params: z.strictObject({ tenantId }),
      responses: responses('no such tenant'),
    },
    async (ctx) => {
      ctx.body = await deps.signIns.list(ctx.state.guard.params.tenantId, filters(ctx.state.guard.query));
      ctx.set('Cache-Control', 'no-store');
    },
  );

  api.add(
    router,
    {
      ...common,
      path: '/api/admin/tenants/:tenantId/users/:userId/sign-ins',
      summary: "A user's sign-in attempts, newest first (keyset pagination)",
      params: z.strictObject({ tenantId, userId }),
      responses: responses('no such user in the tenant'),
    },
    async (ctx) => {
      const { tenantId: tid, userId: uid } = ctx.state.guard.params;
      ctx.body = await deps.signIns.list(tid, { ...filters(ctx.state.guard.query), userId: uid });
      ctx.set('Cache-Control', 'no-store');
    },
  );

  return router;
}
