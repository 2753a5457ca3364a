/** Federation trust sources: SAML metadata aggregates, entity metadata or federations, and their polling. */
import Router from '@koa/router';
import { z } from 'zod';
import {
  TrustSourceCreateInput,
  TrustSourceUpdateInput,
  TrustSourceView,
} from '../../../../shared/schemas/federation.js';
import type { AppDeps, AppState } from '../../../context.js';
import { idempotencyHeader } from '../../../middleware/koa-idempotency.js';
import { ErrorObject, type ApiRegistry } from '../../../openapi.js';
import { TenantQuery } from '../../../route-declarations.js';
import { actorOf } from '../directory.js';
import { base, Id, Paging, common, idemErrors, noTenant, notFound, guardedBy } from './common.js';

export function trustSourceRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { trustSources } = deps.fieldMapping;
  const guarded = guardedBy(deps);
  const tags = ['admin: federation'];
  const idem = idempotencyHeader(deps.idempotency);
  api.add(
    router,
    {
      method: 'post',
      path: `${base}/federation-trust-sources`,
      summary: 'Create a federation trust source (a SAML metadata aggregate, entity metadata or federation)',
      tags,
      ...guarded,
      query: TenantQuery,
      body: TrustSourceCreateInput,
      responses: {
        201: { description: 'created', schema: z.object({ result: TrustSourceView }) },
        ...common,
        409: {
          description:
            'sourceKey already used in this tenant, or automatic_polling_limit: the tenant has ' +
            'IAM_FEDERATION_MAX_AUTOMATIC_SOURCES automatic sources already (field body.protocolPayload.polling.mode)',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.status = 201;
      ctx.body = { result: await trustSources.create(id, ctx.state.guard.body, actorOf(ctx)) };
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/federation-trust-sources`,
      summary: "The tenant's SAML federation trust sources with their metadata polling state",
      tags,
      ...guarded,
      query: Paging,
      responses: {
        200: {
          description: 'the sources',
          schema: z.object({ federationTrustSources: z.array(TrustSourceView) }),
        },
        ...common,
        ...noTenant,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      const q = ctx.state.guard.query;
      ctx.body = { federationTrustSources: await trustSources.list(id, q.limit, q.offset) };
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/federation-trust-sources/:id`,
      summary: 'One federation trust source, by id or sourceKey',
      tags,
      ...guarded,
      params: Id,
      query: TenantQuery,
      responses: {
        200: { description: 'the source', schema: z.object({ result: TrustSourceView }) },
        ...common,
        ...notFound,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = { result: await trustSources.get(id, ctx.state.guard.params.id) };
    },
  );
  api.add(
    router,
    {
      method: 'put',
      path: `${base}/federation-trust-sources/:id`,
      summary:
        'Update a federation trust source if expectedUpdatedAt is its current updatedAt; resets the poller state ' +
        '(optional Idempotency-Key)',
      tags,
      ...guarded,
      params: Id,
      query: TenantQuery,
      body: TrustSourceUpdateInput,
      headers: [idem],
      responses: {
        200: { description: 'the updated source', schema: z.object({ result: TrustSourceView }) },
        ...common,
        ...notFound,
        409: {
          description:
            'stale expectedUpdatedAt (currentUpdatedAt carries the current value), sourceKey taken, ' +
            'automatic_polling_limit (turning the source automatic beyond the tenant cap), or idempotency_in_flight',
          schema: ErrorObject,
        },
        422: idemErrors[422],
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await trustSources.update(
        id,
        ctx.state.guard.params.id,
        ctx.state.guard.body,
        actorOf(ctx),
        ctx.state.idempotency,
      );
    },
  );

  return router;
}
