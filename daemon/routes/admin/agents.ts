import Router from '@koa/router';
import {
  AgentClientMetadataInput,
  AgentClientMetadataResult,
  AgentGrantIdParam,
  AgentGrantUpdateResult,
  AgentGrantView,
  ClientMetadataParam,
  CreateAgentGrantInput,
  PatchAgentGrantInput,
} from '../../../shared/schemas/agents.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf, queryTenant, TenantQuery } from './directory.js';

/**
 * Agent grants (create, show, PATCH, consent renewal) and the agent-safe client metadata PUT
 * (docs/agents.md). Tenant: the token's own, or `?tenant_id=` for a platform admin.
 */
export function agentRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const tags = ['admin: agents'];
  const e400 = { description: 'invalid input; the message names the field', schema: ErrorObject };
  const e404 = { description: 'no such grant, client or user in the tenant', schema: ErrorObject };

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/agent-grants',
      summary: 'Create an agent grant (RFC 9396 authorization_details) for an agent client',
      tags,
      security: 'bearer',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: TenantQuery,
      body: CreateAgentGrantInput,
      responses: {
        201: { description: 'the grant, generation 1, consented', schema: AgentGrantView },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const t = queryTenant(ctx);
      ctx.status = 201;
      ctx.body = await deps.agentGrants.create(t, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/agent-grants/:id',
      summary: 'An agent grant, with its generation, consent version and whether consent is required',
      tags,
      security: 'bearer',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: AgentGrantIdParam,
      query: TenantQuery,
      responses: {
        200: { description: 'the grant', schema: AgentGrantView },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const t = queryTenant(ctx);
      ctx.body = await deps.agentGrants.get(t, ctx.state.guard.params.id);
    },
  );

  api.add(
    router,
    {
      method: 'patch',
      path: '/api/admin/agent-grants/:id',
      summary:
        'Update an agent grant: ceilings revalidated; generation and consent version raised, prior consent ' +
        'revoked, token families of older generations queued for revocation, audited, in one transaction',
      tags,
      security: 'bearer',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: AgentGrantIdParam,
      query: TenantQuery,
      body: PatchAgentGrantInput,
      responses: {
        200: { description: 'Agent grant update result', schema: AgentGrantUpdateResult },
        400: {
          description: 'invalid input or an immutable field (immutable_field), expires_at_too_far',
          schema: ErrorObject,
        },
        ...bearerErrors('tenant'),
        404: e404,
        409: { description: 'grant not active, or a concurrent update', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const t = queryTenant(ctx);
      ctx.body = await deps.agentGrants.update(t, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/agent-grants/:id/consent',
      summary: "Record the grantor's renewed consent for the grant's current consent version",
      tags,
      security: 'bearer',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: AgentGrantIdParam,
      query: TenantQuery,
      responses: {
        200: { description: 'the grant, consent_required false', schema: AgentGrantView },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const t = queryTenant(ctx);
      ctx.body = await deps.agentGrants.renewConsent(t, ctx.state.guard.params.id, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'put',
      path: '/api/admin/agent-write/clients/:id/metadata',
      summary:
        "Agent-safe update of a client's display metadata: client_name, description, logo_uri, client_uri only; " +
        'idempotent',
      tags,
      security: 'bearer',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: ClientMetadataParam,
      query: TenantQuery,
      body: AgentClientMetadataInput,
      responses: {
        200: { description: "the client's public metadata", schema: AgentClientMetadataResult },
        400: {
          description: 'invalid field, or a field that is not agent-writable (field_not_agent_writable)',
          schema: ErrorObject,
        },
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const t = queryTenant(ctx);
      ctx.body = await deps.agentClientMetadata.put(t, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  return router;
}
