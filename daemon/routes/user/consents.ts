/**
 * The end user's consents: GET lists the live grants, DELETE withdraws one and revokes every
 * token family granted under it (and the user's other families at that client). Bearer
 * authentication with the user's own access token; every query is scoped by its tenant and
 * subject, so another user's consent id is 404.
 *
 * A token with the `account` scope (first-party clients only) sees and withdraws every consent
 * of the user. Any other token sees only its own client's consent and may withdraw only that
 * one: another client's consent id is 404, as if it did not exist, so a third-party app learns
 * nothing about the user's other apps (docs/scopes.md, "The account scope").
 */
import Router from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import type { AppDeps, AppState } from '../../context.js';
import { userBearer } from '../../middleware/koa-user-bearer.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';

export const ConsentRecord = z.object({
  id: z.string(),
  clientId: z.string(),
  clientName: z.string().optional(),
  clientLogoUri: z.url().optional(),
  scopes: z.array(z.string()),
  selectedScopes: z.array(z.string()).optional(),
  grantedAt: z.int(),
  expiresAt: z.int().optional(),
  policyVersions: z
    .object({ privacyPolicyVersion: z.string().optional(), tosVersion: z.string().optional(), consentVersion: z.int() })
    .optional(),
});

const errors = {
  401: { description: 'missing, invalid or revoked user access token', schema: ErrorObject },
};

export function userConsentRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const service = deps.account;
  const tags = ['user: consents'];
  // Errors on these paths carry error_code and error_id: the error renderer decides by path.
  const auth = userBearer(deps);
  const owner = (ctx: { state: AppState }) => {
    const a = ctx.state.auth!;
    // undefined: every client's consent; otherwise only the token's own client's.
    const onlyClientId = ctx.state.account ? undefined : String(a.client_id);
    return { tenantId: String(a.tenant_id), userId: String(a.sub), onlyClientId };
  };

  api.add(
    router,
    {
      method: 'get',
      path: '/api/user/consents',
      summary: 'The consents granted by the authenticated end user',
      tags,
      security: 'bearer',
      tenant: 'token',
      errors: 'user',
      authenticate: auth,
      responses: {
        200: {
          description: "the live consents: every one with the account scope, else the token's own client's",
          schema: z.object({ consents: z.array(ConsentRecord), total: z.int() }),
        },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId, userId, onlyClientId } = owner(ctx);
      const consents = await service.listConsents(tenantId, userId, onlyClientId);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { consents, total: consents.length };
    },
  );

  api.add(
    router,
    {
      method: 'delete',
      path: '/api/user/consents/:id',
      summary: 'Withdraw a consent and revoke the tokens granted under it',
      tags,
      security: 'bearer',
      tenant: 'token',
      errors: 'user',
      authenticate: auth,
      params: z.strictObject({ id: z.string().min(1).max(40) }),
      responses: {
        204: { description: 'withdrawn; the tokens granted under it are revoked' },
        400: { description: 'invalid id', schema: ErrorObject },
        ...errors,
        404: {
          description: "no such consent of this user (or, without the account scope, another client's)",
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const { tenantId, userId, onlyClientId } = owner(ctx);
      const ok = await service.withdrawConsent(tenantId, userId, ctx.state.guard.params.id, onlyClientId);
      if (!ok) throw new ApiError(404, 'not_found', 'No such consent.');
      ctx.status = 204;
    },
  );

  return router;
}
