/** Operational notification states of the tenant and their resolution. */
import Router from '@koa/router';
import { z } from 'zod';
import {
  NotificationStateView,
  NotificationTransitionResult,
  ResolveNotificationInput,
} from '../../../../shared/schemas/federation.js';
import type { AppDeps, AppState } from '../../../context.js';
import { idempotencyHeader } from '../../../middleware/koa-idempotency.js';
import { type ApiRegistry } from '../../../openapi.js';
import { TenantQuery } from '../../../route-declarations.js';
import { actorOf } from '../directory.js';
import {
  base,
  NotificationQuery,
  StateId,
  common,
  idemErrors,
  markReplayedTransition,
  notFound,
  guardedBy,
} from './common.js';

export function notificationStateRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { notifications } = deps.fieldMapping;
  const guarded = guardedBy(deps);
  const tags = ['admin: notifications'];
  const idemResolve = idempotencyHeader(deps.idempotency, { replayed: markReplayedTransition });
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
      const id = ctx.state.tenant;
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
      const id = ctx.state.tenant;
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
      const id = ctx.state.tenant;
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
