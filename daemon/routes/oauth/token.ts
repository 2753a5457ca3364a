import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { InvalidRequest } from '../../../shared/errors.js';
import { TokenForm } from '../../../shared/schemas/oauth-forms.js';
import { TokenParams } from '../../../shared/token-params.js';
import type { AppDeps } from '../../context.js';
import { authenticateClient, type ClientAuthState } from '../../middleware/koa-client-auth.js';
import type { ApiRegistry } from '../../openapi.js';
import { DPOP_HEADER, tokenRequestProof } from '../../dpop.js';

const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z
    .enum(['Bearer', 'DPoP', 'N_A'])
    .describe('DPoP for a token bound to the proof key (RFC 9449 §5), N_A for an issued ID-JAG (RFC 8693 §2.2.1)'),
  expires_in: z.number().int(),
  scope: z.string().optional().describe('always present but for an ID-JAG issued without scope'),
  id_token: z.string().optional(),
  refresh_token: z.string().optional(),
  issued_token_type: z.string().optional().describe('token exchange only (RFC 8693 §2.2.1)'),
});

/**
 * POST /token: the client authenticates (the route spec's `authenticate`, by the client
 * authentication service), the form goes to the grant its `grant_type` names (one file each in
 * shared/services/grants/, which checks, issues and records), and the answer is rendered.
 */
export function tokenRoutes(deps: AppDeps, api: ApiRegistry): Router<ClientAuthState> {
  const router = new Router<ClientAuthState>();

  const requireForm: Middleware<ClientAuthState> = async (ctx, next) => {
    // RFC 6749 §3.2: the token endpoint takes application/x-www-form-urlencoded (the exact
    // header, as clients send it, is recognised without type-is parsing it).
    const type = ctx.req.headers['content-type'];
    if (type !== 'application/x-www-form-urlencoded' && !ctx.is('application/x-www-form-urlencoded'))
      throw new InvalidRequest('The token request must be application/x-www-form-urlencoded.');
    await next();
  };

  const dispatch: Middleware<ClientAuthState> = async (ctx) => {
    const params = new TokenParams(ctx.request.body as Record<string, unknown>);
    const grantType = params.single('grant_type');
    if (!grantType) throw new InvalidRequest('grant_type is required.');
    const client = ctx.state.client!;
    // RFC 9449 §5: a proof binds the tokens issued to its key (every grant).
    // FAPI 2.0 §5.3.2.1: sender-constrained tokens, a proof required (docs/fapi.md).
    await deps.fapi.checkTokenRequest(client, ctx.req.headers.dpop);
    const dpop = await tokenRequestProof(deps, ctx, client.tenant_id);
    const body = await deps.grants.run(grantType, { client, params, log: ctx.state.log, ...(dpop ? { dpop } : {}) });
    ctx.set('Pragma', 'no-cache');
    ctx.body = body;
  };

  api.add(
    router,
    {
      method: 'post',
      path: '/token',
      summary: 'OAuth 2.0 token endpoint (RFC 6749 §3.2)',
      tags: ['oauth'],
      security: 'basic',
      parser: 'oauth-form',
      form: TokenForm,
      cors: 'client-origins',
      authenticate: authenticateClient(deps),
      headers: [DPOP_HEADER],
      responses: {
        200: { description: 'tokens (Cache-Control: no-store)', schema: TokenResponse },
        400: { description: 'RFC 6749 §5.2 error, or invalid_dpop_proof / use_dpop_nonce (RFC 9449 §5, §8)' },
        401: { description: 'invalid_client' },
      },
    },
    requireForm,
    dispatch,
  );
  return router;
}
