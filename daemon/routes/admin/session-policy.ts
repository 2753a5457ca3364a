import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { SessionPolicyInput, SessionPolicyView } from '../../../shared/schemas/session-policy.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry, IF_MATCH_HEADER } from '../../openapi.js';
import { actorOf } from './directory.js';

const TenantParam = z.strictObject({ tenantId });
const errors = {
  ...bearerErrors('tenant'),
  404: { description: 'no such tenant', schema: ErrorObject },
};

/**
 * A tenant's session timeouts (docs/security.md, "Session timeouts"): the idle and absolute
 * lifetime of its browser sessions. Same scopes and shape as the branding routes: PUT replaces
 * the section whole; both answer the stored section with a strong ETag, which an optional
 * If-Match on PUT compares (RFC 9110 §13.1.1).
 */
export function sessionPolicyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const common = {
    path: '/api/admin/tenants/:tenantId/session-policy',
    tags: ['admin: session policy'],
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: auth,
    scopes: ADMIN_SCOPES,
    params: TenantParam,
  };

  api.add(
    router,
    {
      ...common,
      method: 'get',
      summary: "The tenant's session timeouts as stored and as they apply; the ETag is what If-Match on PUT compares",
      responses: { 200: { description: 'the session policy', schema: SessionPolicyView }, ...errors },
    },
    async (ctx) => {
      const { view, etag } = await deps.sessionPolicy.view(ctx.state.guard.params.tenantId);
      ctx.set('ETag', etag);
      ctx.body = view;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'put',
      summary:
        "Replace the tenant's session timeouts (a field left out is cleared); optional If-Match (a strong ETag " +
        "from GET, or *): a mismatch is 412. The tenant's live sessions follow at their next request",
      body: SessionPolicyInput,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'the session policy as stored now, with its new ETag', schema: SessionPolicyView },
        400: {
          description:
            'invalid timeouts; the message names the field (not a whole number of seconds, under 300, idle over ' +
            '30 days, absolute over 7 days)',
          schema: ErrorObject,
        },
        ...errors,
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const ifMatch = ctx.get('If-Match');
      const { view, etag } = await deps.sessionPolicy.update(
        ctx.state.guard.params.tenantId,
        ctx.state.guard.body,
        actorOf(ctx),
        { where: 'body', ...(ifMatch ? { ifMatch } : {}) },
      );
      ctx.set('ETag', etag);
      ctx.body = view;
    },
  );

  return router;
}
