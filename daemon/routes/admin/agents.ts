import Router from '@koa/router';
import {
  AgentClientMetadataInput,
  AgentClientMetadataResult,
  AgentGrantIdParam,
  AgentGrantRevokeResult,
  AgentGrantUpdateResult,
  AgentGrantView,
  ClientMetadataParam,
  CreateAgentGrantInput,
  PatchAgentGrantInput,
} from '../../../shared/schemas/agents.js';
import { ApiError } from '../../../shared/errors.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { agentGrantEtag } from '../../../shared/services/agents/grants.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, ETAG_HEADER, type ApiRegistry, IF_MATCH_HEADER } from '../../openapi.js';
import { TenantQuery } from '../../route-declarations.js';
import { actorOf } from './directory.js';

/**
 * Agent grants (create, show, PATCH, revoke; the grantor's consent is renewed on the account surface,
 * routes/account/agent-grants.ts) and the agent-safe client metadata PUT
 * (docs/agents.md). Tenant: the token's own, or `?tenant_id=` for a platform admin.
 */
export function agentRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const tags = ['admin: agents'];
  const e400 = { description: 'invalid input; the message names the field', schema: ErrorObject };
  const e404 = { description: 'no such grant, client or user in the tenant', schema: ErrorObject };
  /** What every route on one grant declares: the admin bearer, the tenant by query, the grant's id. */
  const oneGrant = {
    tags,
    security: 'bearer' as const,
    tenant: 'query' as const,
    authenticate: auth,
    scopes: ADMIN_SCOPES,
    params: AgentGrantIdParam,
    query: TenantQuery,
  };
  /** The grant's strong validator, for If-Match on PATCH and revoke (RFC 9110 §8.8.3, §13.1.1). */
  const etag = (g: { generation: number; consent_required: boolean }) =>
    agentGrantEtag(g.generation, !g.consent_required);
  /** The optional If-Match header as the service's option. */
  const ifMatchOf = (ctx: { get(field: string): string }) => {
    const ifMatch = ctx.get('If-Match');
    return ifMatch ? { ifMatch } : {};
  };

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/agent-grants',
      summary: 'Create an agent grant (RFC 9396 authorization_details) for an agent client',
      tags,
      security: 'bearer',
      tenant: 'query',
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
      const t = ctx.state.tenant;
      ctx.status = 201;
      ctx.body = await deps.agentGrants.create(t, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/agent-grants/:id',
      summary:
        'An agent grant, with its generation, consent version and whether consent is required; ' +
        'the ETag header is what If-Match on PATCH compares',
      ...oneGrant,
      responses: {
        200: { description: 'the grant', schema: AgentGrantView, headers: ETAG_HEADER },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
      },
    },
    async (ctx) => {
      const t = ctx.state.tenant;
      const grant = await deps.agentGrants.get(t, ctx.state.guard.params.id);
      ctx.set('ETag', etag(grant));
      ctx.body = grant;
    },
  );

  api.add(
    router,
    {
      method: 'patch',
      path: '/api/admin/agent-grants/:id',
      summary:
        'Update an agent grant: ceilings revalidated; generation and consent version raised, prior consent ' +
        'revoked, tokens of older generations revoked at once (their outbox entry written), audited, in one ' +
        'transaction. Optional If-Match header (a strong ETag from GET, or *): a mismatch is 412; the ' +
        'response carries the new ETag',
      ...oneGrant,
      body: PatchAgentGrantInput,
      // Read by the handler below; declared here so /openapi.json lists it (RouteSpec.headers).
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'Agent grant update result', schema: AgentGrantUpdateResult, headers: ETAG_HEADER },
        400: {
          description: 'invalid input or an immutable field (immutable_field), expires_at_too_far',
          schema: ErrorObject,
        },
        ...bearerErrors('tenant'),
        403: {
          description:
            'a ceiling exceeded (updater_ceiling_exceeded, grantor_ceiling_exceeded, delegator_ceiling_exceeded, ' +
            'machine_principal_ceiling_exceeded), or a member widened beyond the consented terms ' +
            '(consented_terms_exceeded, naming the field); also insufficient_scope, tenant_forbidden',
          schema: ErrorObject,
        },
        404: e404,
        409: { description: 'grant not active, or a concurrent update', schema: ErrorObject },
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const t = ctx.state.tenant;
      // If-Match is optional (docs/agents.md): without it the generation guard still makes a
      // concurrent update 409; with it a client's stale read is 412 (RFC 9110 §13.1.1).
      const r = await deps.agentGrants.update(
        t,
        ctx.state.guard.params.id,
        ctx.state.guard.body,
        actorOf(ctx),
        ifMatchOf(ctx),
      );
      ctx.set('ETag', etag(r));
      ctx.body = r;
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/agent-grants/:id/revoke',
      operationId: 'revokeAgentGrant',
      summary:
        'Revoke an agent grant for good: status revoked and generation raised (every token of the grant ' +
        'inactive at once), every consent revoked, the revocation outbox entry written, audited, in one ' +
        'transaction. Optional If-Match header as for PATCH; the response carries the new ETag',
      ...oneGrant,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: {
          description: 'the grant, status revoked, with the revocation it queued',
          schema: AgentGrantRevokeResult,
          headers: ETAG_HEADER,
        },
        400: e400,
        ...bearerErrors('tenant'),
        404: e404,
        409: {
          description: 'the grant is not active: already revoked (agent_grant_not_active); or a concurrent update',
          schema: ErrorObject,
        },
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const t = ctx.state.tenant;
      const r = await deps.agentGrants.revoke(t, ctx.state.guard.params.id, actorOf(ctx), ifMatchOf(ctx));
      ctx.set('ETag', etag(r));
      ctx.body = r;
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/agent-grants/:id/consent',
      operationId: 'consentToAgentGrant',
      summary:
        "Refused (403 grantor_consent_required): the grantor's renewed consent comes only from the grantor's " +
        'own session, POST /api/account/agent-grants/{id}/consent',
      tags,
      security: 'bearer',
      // Refused whatever the tenant: bound to the token's own, so no tenant_forbidden first.
      tenant: 'token',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: AgentGrantIdParam,
      query: TenantQuery,
      responses: {
        400: e400,
        ...bearerErrors('tenant'),
        403: {
          description: 'always (grantor_consent_required): an administrator cannot consent for the grantor',
          schema: ErrorObject,
        },
      },
    },
    () => {
      // Review finding 5 (docs/security.md): the consent is the grantor's; an admin token
      // recording it would let the same administrator who widened a grant also approve it.
      throw new ApiError(
        403,
        'grantor_consent_required',
        "Renewed consent must come from the grantor's own signed-in session: " +
          'POST /api/account/agent-grants/{id}/consent.',
      );
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
      tenant: 'query',
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
      const t = ctx.state.tenant;
      ctx.body = await deps.agentClientMetadata.put(t, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  return router;
}
