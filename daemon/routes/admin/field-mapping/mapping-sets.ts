/** Field-mapping sets: a source's attributes mapped to user fields and custom claims. */
import Router from '@koa/router';
import { z } from 'zod';
import {
  FieldMappingSetInput,
  FieldMappingSetUpdateInput,
  FieldMappingSetView,
} from '../../../../shared/schemas/federation.js';
import type { AppDeps, AppState } from '../../../context.js';
import { ErrorObject, type ApiRegistry } from '../../../openapi.js';
import { TenantQuery } from '../../../route-declarations.js';
import { actorOf } from '../directory.js';
import { base, Id, Paging, common, notFound, guardedBy } from './common.js';

export function mappingSetRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { mappingSets } = deps.fieldMapping;
  const guarded = guardedBy(deps);
  const tags = ['admin: field mapping'];

  api.add(
    router,
    {
      method: 'post',
      path: `${base}/sets`,
      summary: "Create a field-mapping set: a source's attributes mapped to user fields and custom claims",
      tags,
      ...guarded,
      query: TenantQuery,
      body: FieldMappingSetInput,
      responses: {
        201: { description: 'created', schema: z.object({ result: FieldMappingSetView }) },
        ...common,
        409: { description: 'setKey already used in this tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.status = 201;
      ctx.body = { result: await mappingSets.create(id, ctx.state.guard.body, actorOf(ctx)) };
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/sets`,
      summary: "The tenant's field-mapping sets, oldest first",
      tags,
      ...guarded,
      query: Paging,
      responses: {
        200: { description: 'the sets', schema: z.object({ fieldMappingSets: z.array(FieldMappingSetView) }) },
        ...common,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      const q = ctx.state.guard.query;
      ctx.body = { fieldMappingSets: await mappingSets.list(id, q.limit, q.offset) };
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/sets/:id`,
      summary: 'One field-mapping set, by id or setKey',
      tags,
      ...guarded,
      params: Id,
      query: TenantQuery,
      responses: {
        200: { description: 'the set', schema: z.object({ result: FieldMappingSetView }) },
        ...common,
        ...notFound,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = { result: await mappingSets.get(id, ctx.state.guard.params.id) };
    },
  );
  api.add(
    router,
    {
      method: 'put',
      path: `${base}/sets/:id`,
      summary: "Replace a field-mapping set's fields (its setKey stays)",
      tags,
      ...guarded,
      params: Id,
      query: TenantQuery,
      body: FieldMappingSetUpdateInput,
      responses: {
        200: { description: 'the set', schema: z.object({ result: FieldMappingSetView }) },
        ...common,
        ...notFound,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = {
        result: await mappingSets.update(id, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx)),
      };
    },
  );
  api.add(
    router,
    {
      method: 'delete',
      path: `${base}/sets/:id`,
      summary: 'Delete a field-mapping set that no federation trust source names',
      tags,
      ...guarded,
      params: Id,
      query: TenantQuery,
      responses: {
        204: { description: 'deleted' },
        ...common,
        ...notFound,
        409: { description: 'mapping_set_in_use: `sources` lists the trust sources that name it', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      await mappingSets.delete(id, ctx.state.guard.params.id, actorOf(ctx));
      ctx.status = 204;
    },
  );

  return router;
}
