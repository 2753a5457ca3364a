/**
 * The grantor's side of an agent grant (docs/agents.md, "Renewed consent"): the signed-in user
 * reads a grant they granted and renews their consent to its current terms after a PATCH.
 * Authenticated by the session cookie only: the consent must come from the grantor's own
 * session, never from an administrator's or a client's token acting for them (review finding 5,
 * docs/security.md). The state-changing POST also refuses a cross-origin request (Origin present
 * and not the issuer's origin), as the devices DELETE does.
 */
import Router from '@koa/router';
import { AgentGrantIdParam, AgentGrantView } from '../../../shared/schemas/agents.js';
import { agentGrantEtag } from '../../../shared/services/agents/grants.js';
import type { AppDeps, AppState } from '../../context.js';
import { refuseCrossOrigin } from '../../csrf.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import { ErrorObject, ETAG_HEADER, type ApiRegistry } from '../../openapi.js';

export function accountAgentGrantRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const tags = ['account: agent grants'];
  const issuerOrigin = new URL(deps.config.issuer).origin;
  const authenticate = sessionAuth(deps);
  const errors = {
    400: { description: 'invalid id', schema: ErrorObject },
    401: { description: 'no valid session cookie', schema: ErrorObject },
    404: { description: 'no such grant of this user as grantor', schema: ErrorObject },
  };

  api.add(
    router,
    {
      method: 'get',
      path: '/api/account/agent-grants/:id',
      summary: 'An agent grant the signed-in user granted: the terms a renewed consent agrees to',
      tags,
      security: 'cookie',
      errors: 'user',
      authenticate,
      params: AgentGrantIdParam,
      responses: { 200: { description: 'the grant', schema: AgentGrantView, headers: ETAG_HEADER }, ...errors },
    },
    async (ctx) => {
      const s = ctx.state.session!.session;
      const grant = await deps.agentGrants.getForGrantor(s.tenant_id, ctx.state.guard.params.id, s.user_id);
      ctx.set('Cache-Control', 'no-store');
      ctx.set('ETag', agentGrantEtag(grant.generation, !grant.consent_required));
      ctx.body = grant;
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/account/agent-grants/:id/consent',
      operationId: 'consentToAccountAgentGrant',
      summary: "The grantor's renewed consent to the grant's current terms (idempotent)",
      tags,
      security: 'cookie',
      errors: 'user',
      authenticate,
      params: AgentGrantIdParam,
      responses: {
        200: { description: 'the grant, consent_required false', schema: AgentGrantView, headers: ETAG_HEADER },
        ...errors,
        403: { description: 'cross-origin request', schema: ErrorObject },
        409: { description: 'the grant was revoked (agent_grant_not_active)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      refuseCrossOrigin(ctx.get('Origin'), issuerOrigin);
      const s = ctx.state.session!.session;
      const grant = await deps.agentGrants.renewConsent(s.tenant_id, ctx.state.guard.params.id, s.user_id, {
        type: 'user',
        id: s.user_id,
        requestId: ctx.state.requestId,
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.set('ETag', agentGrantEtag(grant.generation, true));
      ctx.body = grant;
    },
  );

  return router;
}
