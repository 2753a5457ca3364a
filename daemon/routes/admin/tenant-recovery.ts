/**
 * Disaster-recovery control plane (iam.platform only; docs/recovery.md):
 * - POST /api/admin/platform/control-plane/tenant-recovery/{operationId}/reactivate
 * - GET  /api/admin/platform/control-plane/tenant-recovery/{operationId}
 * - GET  /api/admin/platform/control-plane/tenant-routes/{tenantId}
 * The operation itself is opened, confirmed and verified by the operator with `iam recovery`;
 * the reactivation is the one step taken over HTTP, behind a typed confirmation, the
 * preconditions, an optional Idempotency-Key (its answer recorded in the reactivation's own
 * transaction) and one conditional UPDATE.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { SCOPE_PLATFORM } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { idempotencyHeader } from '../../middleware/koa-idempotency.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const operationId = z
  .string()
  .min(1)
  .max(80)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be a recovery operation id such as dr_ten_x_1');
const OpParams = z.strictObject({ operationId });
const TenantParams = z.strictObject({ tenantId });

export const ReactivateInput = z.object({
  confirmation: z.string().min(1).max(200),
});

const nullableInt = z.number().int().nullable();
export const RecoveryTargetSchema = z.looseObject({
  shardId: z.string(),
  dataRole: z.string(),
  residencyPartition: z.string(),
  bindingRef: z.string(),
  providerDatabaseId: z.string(),
  migrationStreamId: z.string(),
  releaseId: z.string(),
  manifestDigest: z.string(),
  assignmentGeneration: z.number().int(),
  shardGeneration: z.number().int(),
  restoreConfirmedAt: nullableInt,
  migrationVerifiedAt: nullableInt,
  lookupReprojectedAt: nullableInt,
  bindingSmokeVerifiedAt: nullableInt,
});
export const TenantRecoverySchema = z.looseObject({
  operationId: z.string(),
  environmentId: z.string(),
  tenantId: z.string(),
  state: z.string(),
  pinnedRouteGeneration: z.number().int(),
  denyRuntimeGeneration: nullableInt,
  denyRegistryGeneration: nullableInt,
  denyObservedAt: nullableInt,
  drainNotBefore: nullableInt,
  restoreReferenceRecorded: z.boolean(),
  restoredAt: nullableInt,
  migrationVerifiedAt: nullableInt,
  lookupReprojectedAt: nullableInt,
  bindingSmokeVerifiedAt: nullableInt,
  lookupReprojection: z.looseObject({
    stage: z.string(),
    targetIndex: z.number().int(),
    afterCreatedAt: z.number().int(),
    afterId: z.string(),
    afterRowId: z.number().int(),
    projectedRows: z.number().int(),
    verifiedRows: z.number().int(),
    registryDigestPinned: z.boolean(),
    leaseActive: z.boolean(),
  }),
  reactivatedRuntimeGeneration: nullableInt,
  reactivatedAt: nullableInt,
  lastErrorCode: z.string().nullable(),
  lastErrorCause: z
    .string()
    .nullable()
    .describe('why the last step failed, sanitised (no secret, address or stack); null with no error'),
  canCancel: z.boolean(),
  canConfirmRestore: z.boolean(),
  canVerify: z.boolean(),
  canReactivate: z.boolean(),
  targets: z.array(RecoveryTargetSchema),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});
export const ReactivateResponse = z.looseObject({
  recovery: TenantRecoverySchema,
  auditId: z.string(),
  idempotent_replay: z.boolean().optional(),
});

const RouteResponse = z.object({
  route: z.object({
    tenantId: z.string(),
    routeGeneration: z.number().int(),
    state: z.string(),
    runtimeGeneration: z.number().int(),
    registryGeneration: z.number().int(),
    registryDigest: z.string().nullable(),
    updatedAt: z.number().int(),
  }),
  publication: z
    .object({
      publicationId: z.string(),
      routeGeneration: z.number().int(),
      runtimeGeneration: z.number().int(),
      state: z.string(),
      registryDigest: z.string().nullable(),
      operationId: z.string().nullable(),
      publishedAt: z.number().int(),
      jws: z.string().describe('compact JWS, typ route-publication+jwt, signed with a key published at /jwks'),
    })
    .nullable(),
});

const auth = bearerErrors('platform');

export function tenantRecoveryRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const platformOnly = bearer(deps, [SCOPE_PLATFORM]);
  const idem = idempotencyHeader(deps.idempotency);
  const service = deps.recovery;
  const floor = deps.config.recoveryStabilizationSeconds;
  const tags = ['admin: tenant recovery'];
  const base = '/api/admin/platform/control-plane';

  api.add(
    router,
    {
      method: 'post',
      path: `${base}/tenant-recovery/:operationId/reactivate`,
      summary:
        'Reactivate a recovered tenant: publish its pinned route generation as active ' +
        '(typed confirmation; optional Idempotency-Key)',
      tags,
      security: 'bearer',
      authenticate: platformOnly,
      tenant: 'platform',
      scopes: [SCOPE_PLATFORM],
      params: OpParams,
      body: ReactivateInput,
      headers: [idem],
      responses: {
        200: { description: 'the reactivated operation and the audit event id', schema: ReactivateResponse },
        400: { description: 'invalid body or Idempotency-Key', schema: ErrorObject },
        ...auth,
        404: { description: 'no such recovery operation', schema: ErrorObject },
        409: {
          description:
            'an unmet precondition: restore_not_confirmed, migration_not_verified, lookup_not_reprojected, ' +
            'binding_smoke_incomplete, stabilization_pending (notBefore), verify_in_progress; ' +
            'recovery_not_reactivatable (already reactivated or cancelled); idempotency_in_flight',
          schema: ErrorObject,
        },
        422: { description: 'confirmation_mismatch, or idempotency_key_mismatch', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { operationId: id } = ctx.state.guard.params;
      const body = ctx.state.guard.body;
      ctx.status = 200;
      ctx.body = await service.reactivate(id, body.confirmation, actorOf(ctx), floor, ctx.state.idempotency);
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: `${base}/tenant-recovery/:operationId`,
      summary: 'Read a tenant recovery operation',
      tags,
      security: 'bearer',
      authenticate: platformOnly,
      tenant: 'platform',
      scopes: [SCOPE_PLATFORM],
      params: OpParams,
      responses: {
        200: {
          description:
            'the operation; stabilizationNotBefore is when a reactivation may proceed ' +
            '(null before the smoke checks pass)',
          schema: z.looseObject({ recovery: TenantRecoverySchema, stabilizationNotBefore: nullableInt }),
        },
        400: { description: 'invalid operation id', schema: ErrorObject },
        ...auth,
        404: { description: 'no such recovery operation', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { operationId: id } = ctx.state.guard.params;
      const { recovery, details } = await service.get(id, floor);
      ctx.body = { recovery, stabilizationNotBefore: details.stabilizationNotBefore };
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: `${base}/tenant-routes/:tenantId`,
      summary: "Read a tenant's current route and its latest signed route publication",
      tags,
      security: 'bearer',
      authenticate: platformOnly,
      tenant: 'platform',
      scopes: [SCOPE_PLATFORM],
      params: TenantParams,
      responses: {
        200: { description: 'the route and the latest publication', schema: RouteResponse },
        400: { description: 'invalid tenant id', schema: ErrorObject },
        ...auth,
        404: { description: 'the tenant has no published route (it was never recovered)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      ctx.body = await service.route(id);
    },
  );

  return router;
}
