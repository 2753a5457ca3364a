/**
 * The admin routes of one section of a tenant's settings document (branding, session timeouts):
 * GET answers the section as stored and as it applies, PUT replaces it whole; both answer a
 * strong ETag over the stored section, which an optional If-Match on PUT compares (RFC 9110
 * §13.1.1; a mismatch is 412). Same scopes for both: the admin scopes, bound to the tenant.
 */
import Router from '@koa/router';
import { z } from 'zod';
import type { Actor } from '../../../shared/services/audit.js';
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

/** The service behind a section: its view with the ETag, and its whole replacement. */
export interface SettingsSectionService<V> {
  view(tenantId: string): Promise<{ view: V; etag: string }>;
  update(
    tenantId: string,
    input: never,
    actor: Actor,
    opts: { where: 'body'; ifMatch?: string },
  ): Promise<{ view: V; etag: string }>;
}

export interface SettingsSectionSpec<V> {
  path: string;
  tag: string;
  service: (deps: AppDeps) => SettingsSectionService<V>;
  input: z.ZodTypeAny;
  view: z.ZodTypeAny;
  /** What the section is, in the summaries ("branding", "session timeouts"). */
  what: string;
  summaries: { get: string; put: string };
  /** The 400's description: what makes the input invalid. */
  invalid: string;
}

export function settingsSectionRoutes<V>(
  deps: AppDeps,
  api: ApiRegistry,
  spec: SettingsSectionSpec<V>,
): Router<AppState> {
  const router = new Router<AppState>();
  const common = {
    path: spec.path,
    tags: [spec.tag],
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: bearer(deps, ADMIN_SCOPES),
    scopes: ADMIN_SCOPES,
    params: TenantParam,
  };
  const service = spec.service(deps);

  api.add(
    router,
    {
      ...common,
      method: 'get',
      summary: spec.summaries.get,
      responses: { 200: { description: `the ${spec.what}`, schema: spec.view }, ...errors },
    },
    async (ctx) => {
      const { view, etag } = await service.view(ctx.state.guard.params.tenantId);
      ctx.set('ETag', etag);
      ctx.body = view;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'put',
      summary: spec.summaries.put,
      body: spec.input,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: `the ${spec.what} as stored now, with its new ETag`, schema: spec.view },
        400: { description: spec.invalid, schema: ErrorObject },
        ...errors,
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const ifMatch = ctx.get('If-Match');
      const { view, etag } = await service.update(
        ctx.state.guard.params.tenantId,
        ctx.state.guard.body as never,
        actorOf(ctx),
        { where: 'body', ...(ifMatch ? { ifMatch } : {}) },
      );
      ctx.set('ETag', etag);
      ctx.body = view;
    },
  );
  return router;
}
