import Router from '@koa/router';
import { z } from 'zod';
import { BrandingInput, BrandingView } from '../../../shared/schemas/branding.js';
import { tenantId } from '../../../shared/schemas/common.js';
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
 * A tenant's branding (docs/branding.md): the display name, logo, primary colour, support link
 * and custom CSS of its sign-in pages and mails. PUT replaces it whole; both answer the stored
 * branding with a strong ETag, which an optional If-Match on PUT compares (RFC 9110 §13.1.1).
 */
export function brandingRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const tags = ['admin: branding'];
  const path = '/api/admin/tenants/:tenantId/branding';
  const common = {
    path,
    tags,
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
      summary: "The tenant's branding as stored and as its pages show it; the ETag is what If-Match on PUT compares",
      responses: { 200: { description: 'the branding', schema: BrandingView }, ...errors },
    },
    async (ctx) => {
      const { view, etag } = await deps.branding.view(ctx.state.guard.params.tenantId);
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
        "Replace the tenant's branding (a field left out is cleared); optional If-Match (a strong ETag from GET, " +
        'or *): a mismatch is 412',
      body: BrandingInput,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'the branding as stored now, with its new ETag', schema: BrandingView },
        400: {
          description:
            'invalid branding; the message names the field (a colour not #rrggbb, a logo not https or a path of ' +
            'this origin, a support link not https or mailto:, custom CSS too long or containing </style)',
          schema: ErrorObject,
        },
        ...errors,
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const ifMatch = ctx.get('If-Match');
      const { view, etag } = await deps.branding.update(
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
