import Router from '@koa/router';
import { z } from 'zod';
import {
  FieldMappingSetInput,
  FieldMappingSetUpdateInput,
  FieldMappingSetView,
  NotificationStateView,
  NotificationTransitionResult,
  ResolveNotificationInput,
  SourceProfileCreateInput,
  SourceProfileResult,
  SourceProfileVersionInput,
  SourceProfileVersionView,
  TrustSourceCreateInput,
  TrustSourceUpdateInput,
  TrustSourceView,
} from '../../../shared/schemas/federation.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { NOTIFICATIONS_DEFAULT_LIMIT, NOTIFICATIONS_MAX_LIMIT } from '../../../shared/services/notification-states.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { idempotencyHeader } from '../../middleware/koa-idempotency.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf, queryTenant, TenantQuery } from './directory.js';

const Paging = TenantQuery.extend({
  limit: z.coerce.number().int().min(1).max(500).optional().describe('at most this many (default 100, at most 500)'),
  offset: z.coerce.number().int().min(0).optional(),
});
const NotificationQuery = TenantQuery.extend({
  state: z.enum(['open', 'resolved']).optional().describe('only states in this state'),
  condition: z.string().min(1).max(64).optional().describe('only this condition, e.g. metadata_expiring'),
  subjectId: z.string().min(1).max(128).optional().describe('only states about this subject, e.g. a trust source id'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(NOTIFICATIONS_MAX_LIMIT)
    .optional()
    .describe(
      `at most this many, newest first (default ${NOTIFICATIONS_DEFAULT_LIMIT}, at most ${NOTIFICATIONS_MAX_LIMIT})`,
    ),
  offset: z.coerce.number().int().min(0).optional(),
});
const Id = z.strictObject({ id: z.string().min(1).max(128) });
const StateId = z.strictObject({ stateId: z.string().min(1).max(128) });

const common = {
  400: {
    description: 'invalid input; the message names the field (e.g. body.protocolPayload.polling.intervalSeconds)',
    schema: ErrorObject,
  },
  ...bearerErrors('tenant'),
};
const notFound = { 404: { description: 'not found in this tenant', schema: ErrorObject } };
/** A platform admin's `?tenant_id=` naming no tenant (docs/conformance.md, declared error responses). */
const noTenant = { 404: { description: "no such tenant (a platform admin's tenant_id)", schema: ErrorObject } };
const idemErrors = {
  409: { description: 'conflict, or idempotency_in_flight', schema: ErrorObject },
  422: { description: 'idempotency_key_mismatch: the key was used with another body', schema: ErrorObject },
};

/**
 * On a replayed resolve (the idempotency middleware answered from its record) the transition
 * result says so: `idempotent` indicates replay (interface specification, "States and
 * transitions"). The first answer is recorded as it was sent; only the replay is marked.
 */
const markReplayedTransition = (body: unknown): unknown => {
  const b = body as { result?: { idempotent?: boolean } } | undefined;
  return b?.result && typeof b.result === 'object' ? { ...b, result: { ...b.result, idempotent: true } } : body;
};

/**
 * Field mapping and SAML federation administration (docs/federation.md): source profiles,
 * field-mapping sets, federation trust sources and operational notification states, each in
 * the token's own tenant or, for a platform admin, `?tenant_id=`.
 */
export function fieldMappingRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const idem = idempotencyHeader(deps.idempotency);
  const idemResolve = idempotencyHeader(deps.idempotency, { replayed: markReplayedTransition });
  const { sourceProfiles, mappingSets, trustSources, notifications } = deps.fieldMapping;
  const base = '/api/admin/field-mapping';
  const guarded = { security: 'bearer' as const, authenticate: auth, scopes: ADMIN_SCOPES };

  // ---- source profiles ----------------------------------------------------------------------
  let tags = ['admin: field mapping'];
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
      ctx.status = 201;
      ctx.body = await sourceProfiles.addVersion(id, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  // ---- field-mapping sets -------------------------------------------------------------------
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
      await mappingSets.delete(id, ctx.state.guard.params.id, actorOf(ctx));
      ctx.status = 204;
    },
  );

  // ---- federation trust sources -------------------------------------------------------------
  tags = ['admin: federation'];
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
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
      const id = queryTenant(ctx);
      ctx.body = await trustSources.update(
        id,
        ctx.state.guard.params.id,
        ctx.state.guard.body,
        actorOf(ctx),
        ctx.state.idempotency,
      );
    },
  );

  // ---- operational notification states ------------------------------------------------------
  tags = ['admin: notifications'];
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/operational-notification-states`,
      summary: 'Operational notification states of the tenant, newest first',
      tags,
      ...guarded,
      query: NotificationQuery,
      responses: {
        200: {
          description: 'the states',
          schema: z.object({ operationalNotificationStates: z.array(NotificationStateView) }),
        },
        ...common,
      },
    },
    async (ctx) => {
      const id = queryTenant(ctx);
      const q = ctx.state.guard.query;
      ctx.body = {
        operationalNotificationStates: await notifications.list(
          id,
          { state: q.state, condition: q.condition, subjectId: q.subjectId },
          q.limit,
          q.offset,
        ),
      };
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: `${base}/operational-notification-states/:stateId`,
      summary: 'One operational notification state',
      tags,
      ...guarded,
      params: StateId,
      query: TenantQuery,
      responses: {
        200: { description: 'the state', schema: z.object({ result: NotificationStateView }) },
        ...common,
        ...notFound,
      },
    },
    async (ctx) => {
      const id = queryTenant(ctx);
      ctx.body = { result: await notifications.get(id, ctx.state.guard.params.stateId) };
    },
  );
  api.add(
    router,
    {
      method: 'post',
      path: `${base}/operational-notification-states/:stateId/resolve`,
      summary:
        'Resolve an operational notification state; previousState is its prior state, idempotent is true when it ' +
        'was already resolved (optional Idempotency-Key)',
      tags,
      ...guarded,
      params: StateId,
      query: TenantQuery,
      body: ResolveNotificationInput,
      headers: [idemResolve],
      responses: {
        200: { description: 'the transition', schema: NotificationTransitionResult },
        ...common,
        ...notFound,
        ...idemErrors,
      },
    },
    async (ctx) => {
      const id = queryTenant(ctx);
      ctx.body = await notifications.resolve(
        id,
        ctx.state.guard.params.stateId,
        ctx.state.guard.body.assignedTo,
        actorOf(ctx),
        ctx.state.idempotency,
      );
    },
  );

  return router;
}
