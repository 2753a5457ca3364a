import Router from '@koa/router';
import { z } from 'zod';
import {
  APPROVAL_STATUSES,
  APPROVALS_DEFAULT_LIMIT,
  APPROVALS_MAX_LIMIT,
  ApprovalCreateInput,
  ApprovalList,
  ApprovalRequestView,
  CancelInput,
  DecisionInput,
  RelationshipInput,
  RelationshipsResult,
  RelationshipView,
} from '../../../shared/schemas/approvals.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { TenantQuery } from '../../route-declarations.js';
import { actorOf } from './directory.js';

const RelationshipsQuery = TenantQuery.extend({
  direction: z
    .enum(['incoming', 'outgoing'])
    .optional()
    .describe('only incoming (the user is the related party) or outgoing (the user is the subject); default both'),
});
const ApprovalsQuery = TenantQuery.extend({
  status: z
    .enum(APPROVAL_STATUSES)
    .optional()
    .describe(`only requests in this status: ${APPROVAL_STATUSES.join(', ')}`),
  investigation_id: z.string().min(1).max(128).optional().describe('only requests of this investigation'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(APPROVALS_MAX_LIMIT)
    .optional()
    .describe(`at most this many, newest first (default ${APPROVALS_DEFAULT_LIMIT}, at most ${APPROVALS_MAX_LIMIT})`),
});
const UserId = z.strictObject({ id: z.string().min(1).max(128) });
const UserRel = z.strictObject({ id: z.string().min(1).max(128), relId: z.string().min(1).max(128) });
const RequestId = z.strictObject({ id: z.string().min(1).max(128) });
const StepParams = z.strictObject({ id: z.string().min(1).max(128), stepKey: z.string().min(1).max(64) });

const common = {
  400: { description: 'invalid input; the message names the field', schema: ErrorObject },
  ...bearerErrors('tenant'),
};
const notFound = { 404: { description: 'no such user, relationship or request in this tenant', schema: ErrorObject } };
const notPending = {
  409: { description: 'approval_not_pending / step_not_pending / relationship_exists', schema: ErrorObject },
};

/**
 * The access graph (GET/POST/DELETE /api/admin/users/{id}/relationships) and approval requests
 * (/api/admin/approvals), docs/approvals.md. The tenant is the token's own, or `?tenant_id=`
 * for a platform admin.
 */
export function approvalRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const guarded = { security: 'bearer' as const, tenant: 'query' as const, authenticate: auth, scopes: ADMIN_SCOPES };
  const { relationships, approvals } = deps;

  let tags = ['admin: relationships'];
  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/users/:id/relationships',
      summary: "The user's relationships in force (expired edges are not listed), by direction",
      tags,
      ...guarded,
      params: UserId,
      query: RelationshipsQuery,
      responses: {
        200: { description: 'the relationships', schema: RelationshipsResult },
        ...common,
        ...notFound,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await relationships.list(id, ctx.state.guard.params.id, ctx.state.guard.query.direction);
    },
  );
  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/users/:id/relationships',
      summary: 'Add a typed, optionally expiring relationship from this user to another user of the tenant',
      tags,
      ...guarded,
      params: UserId,
      query: TenantQuery,
      body: RelationshipInput,
      responses: {
        201: { description: 'the relationship, with the related user display fields', schema: RelationshipView },
        ...common,
        ...notFound,
        ...notPending,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await relationships.add(id, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
      ctx.status = 201;
    },
  );
  api.add(
    router,
    {
      method: 'delete',
      path: '/api/admin/users/:id/relationships/:relId',
      summary: 'Remove a relationship the user takes part in',
      tags,
      ...guarded,
      params: UserRel,
      query: TenantQuery,
      responses: { 204: { description: 'removed' }, ...common, ...notFound },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      await relationships.remove(id, ctx.state.guard.params.id, ctx.state.guard.params.relId, actorOf(ctx));
      ctx.status = 204;
    },
  );

  tags = ['admin: approvals'];
  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/approvals',
      summary: 'Approval requests with their steps and grants, newest first',
      tags,
      ...guarded,
      query: ApprovalsQuery,
      responses: { 200: { description: 'the requests and how many match', schema: ApprovalList }, ...common },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      const q = ctx.state.guard.query;
      ctx.body = await approvals.list(id, { status: q.status, investigation_id: q.investigation_id }, q.limit);
    },
  );
  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/approvals',
      summary: 'Open an approval request; its approvers (steps, or the target user managers) are notified by email',
      tags,
      ...guarded,
      query: TenantQuery,
      body: ApprovalCreateInput,
      responses: {
        201: { description: 'the pending request', schema: ApprovalRequestView },
        ...common,
        422: {
          description: 'no_approvers: no steps and no manager_of relationship toward the target',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await approvals.create(id, ctx.state.guard.body, actorOf(ctx), 'admin_api');
      ctx.status = 201;
    },
  );
  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/approvals/:id',
      summary: 'One approval request with its steps, grants and notification results',
      tags,
      ...guarded,
      params: RequestId,
      query: TenantQuery,
      responses: { 200: { description: 'the request', schema: ApprovalRequestView }, ...common, ...notFound },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await approvals.get(id, ctx.state.guard.params.id);
    },
  );
  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/approvals/:id/steps/:stepKey/decision',
      operationId: 'decideApprovalStep',
      summary: 'Approve or deny one step as its approver; the requester cannot decide their own request',
      tags,
      ...guarded,
      params: StepParams,
      query: TenantQuery,
      body: DecisionInput,
      responses: {
        200: { description: 'the request after the decision', schema: ApprovalRequestView },
        ...common,
        ...notFound,
        ...notPending,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      const p = ctx.state.guard.params;
      ctx.body = await approvals.decide(id, p.id, p.stepKey, ctx.state.guard.body, actorOf(ctx));
    },
  );
  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/approvals/:id/cancel',
      summary: 'Withdraw a pending approval request',
      tags,
      ...guarded,
      params: RequestId,
      query: TenantQuery,
      body: CancelInput,
      responses: {
        200: { description: 'the cancelled request', schema: ApprovalRequestView },
        ...common,
        ...notFound,
        ...notPending,
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await approvals.cancel(id, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  return router;
}
