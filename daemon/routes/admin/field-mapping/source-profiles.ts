/** Source profiles: the schemas a federation source sends, versioned. */
import Router from '@koa/router';
import { z } from 'zod';
import {
  SourceProfileCreateInput,
  SourceProfileResult,
  SourceProfileVersionInput,
  SourceProfileVersionView,
} from '../../../../shared/schemas/federation.js';
import type { AppDeps, AppState } from '../../../context.js';
import { idempotencyHeader } from '../../../middleware/koa-idempotency.js';
import { ErrorObject, type ApiRegistry } from '../../../openapi.js';
import { TenantQuery } from '../../../route-declarations.js';
import { actorOf } from '../directory.js';
import { base, Id, Paging, common, idemErrors, noTenant, notFound, guardedBy } from './common.js';

export function sourceProfileRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { sourceProfiles } = deps.fieldMapping;
  const guarded = guardedBy(deps);
  const tags = ['admin: field mapping'];
  const idem = idempotencyHeader(deps.idempotency);
  api.add(
    router,
    {
      method: 'post',
      path: `${base}/source-profiles`,
      summary: 'Create a source profile and, with a schema, its first version (optional Idempotency-Key)',
      tags,
      ...guarded,
      query: TenantQuery,
      body: SourceProfileCreateInput,
      headers: [idem],
      responses: {
        201: { description: 'created', schema: z.object({ result: SourceProfileResult }) },
        ...common,
        ...noTenant,
        ...idemErrors,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.status = 201;
      ctx.body = await sourceProfiles.create(id, ctx.state.guard.body, actorOf(ctx), ctx.state.idempotency);
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/source-profiles`,
      summary: "The tenant's source profiles with their active versions, oldest first",
      tags,
      ...guarded,
      query: Paging,
      responses: {
        200: { description: 'the profiles', schema: z.object({ sourceProfiles: z.array(SourceProfileResult) }) },
        ...common,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      const q = ctx.state.guard.query;
      ctx.body = { sourceProfiles: await sourceProfiles.list(id, q.limit, q.offset) };
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/source-profiles/:id`,
      summary: 'One source profile (by id or profileKey) with its active version',
      tags,
      ...guarded,
      params: Id,
      query: TenantQuery,
      responses: {
        200: { description: 'the profile', schema: z.object({ result: SourceProfileResult }) },
        ...common,
        ...notFound,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = { result: await sourceProfiles.get(id, ctx.state.guard.params.id) };
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/source-profiles/:id/versions`,
      summary: "A source profile's versions, oldest first",
      tags,
      ...guarded,
      params: Id,
      query: TenantQuery,
      responses: {
        200: { description: 'the versions', schema: z.object({ versions: z.array(SourceProfileVersionView) }) },
        ...common,
        ...notFound,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = { versions: await sourceProfiles.versions(id, ctx.state.guard.params.id) };
    },
  );
  api.add(
    router,
    {
      method: 'post',
      path: `${base}/source-profiles/:id/versions`,
      summary: 'Add a schema version to a source profile; it becomes the active version',
      tags,
      ...guarded,
      params: Id,
      query: TenantQuery,
      body: SourceProfileVersionInput,
      responses: {
        201: {
          description: 'the profile with its new active version',
          schema: z.object({ result: SourceProfileResult }),
        },
        ...common,
        ...notFound,
        409: { description: 'versionLabel already used by this profile', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.status = 201;
      ctx.body = await sourceProfiles.addVersion(id, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  return router;
}
