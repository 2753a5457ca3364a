import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { InvalidRequest, InvalidScope, InvalidTarget, UnauthorizedClient, UnsupportedGrantType } from '../../../shared/errors.js';
import type { AppDeps } from '../../context.js';
import { authenticateClient, type ClientAuthState } from '../../middleware/koa-client-auth.js';
import type { ApiRegistry } from '../../openapi.js';

export const ACCESS_TOKEN_TTL_SECONDS = 600;

const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string(),
});

/** RFC 6749 §3.3: a space-delimited list; duplicates collapse. */
export function parseScope(raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new InvalidRequest('scope must be a single space-delimited string.');
  return [...new Set(raw.split(' ').filter(Boolean))];
}

/** Parameters must not repeat (RFC 6749 §3.2); koa-body turns a repeated one into an array. */
function single(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new InvalidRequest(`${name} must appear once.`);
  return v;
}

/**
 * POST /token. Each grant is a small named step after client authentication, so the RFC's
 * processing order reads top to bottom.
 */
export function tokenRoutes(deps: AppDeps, api: ApiRegistry): Router<ClientAuthState> {
  const router = new Router<ClientAuthState>();

  const requireForm: Middleware<ClientAuthState> = async (ctx, next) => {
    // RFC 6749 §3.2: the token endpoint takes application/x-www-form-urlencoded.
    if (!ctx.is('application/x-www-form-urlencoded')) throw new InvalidRequest('The token request must be application/x-www-form-urlencoded.');
    await next();
  };

  const clientCredentials: Middleware<ClientAuthState> = async (ctx) => {
    const client = ctx.state.client!;
    const body = ctx.request.body as Record<string, unknown>;
    // RFC 6749 §4.4: only confidential clients.
    if (client.client_type !== 'confidential' || !client.grant_types.includes('client_credentials')) {
      throw new UnauthorizedClient('This client may not use the client_credentials grant.');
    }
    const requested = parseScope(single(body, 'scope'));
    const granted = requested ?? client.scopes.filter((s) => s !== 'openid');
    const outside = granted.filter((s) => !client.scopes.includes(s));
    if (outside.length) throw new InvalidScope(`Scope not allowed for this client: ${outside.join(' ')}`);
    // RFC 8707 §2: resource indicators must be among the client's audiences.
    const resource = body.resource === undefined ? [] : ([] as unknown[]).concat(body.resource).map(String);
    const unknown = resource.filter((r) => !client.audiences.includes(r));
    if (unknown.length) throw new InvalidTarget(`Resource not allowed for this client: ${unknown.join(' ')}`);
    const audience = resource.length ? resource : client.audiences.length ? client.audiences : [deps.config.issuer];
    const issued = await deps.tokens.issueAccessToken({
      sub: client.client_id, clientId: client.client_id, tenantId: client.tenant_id,
      scope: granted, audience: audience.includes(deps.config.issuer) ? audience : [...audience, deps.config.issuer],
      ttlSeconds: ACCESS_TOKEN_TTL_SECONDS,
    });
    ctx.set('Pragma', 'no-cache');
    ctx.body = { access_token: issued.token, token_type: 'Bearer', expires_in: issued.expiresIn, scope: granted.join(' ') };
  };

  const grants: Record<string, Middleware<ClientAuthState>> = { client_credentials: clientCredentials };

  const dispatch: Middleware<ClientAuthState> = async (ctx, next) => {
    const grantType = single(ctx.request.body as Record<string, unknown>, 'grant_type');
    if (!grantType) throw new InvalidRequest('grant_type is required.');
    const handler = grants[grantType];
    if (!handler) throw new UnsupportedGrantType(`Unsupported grant_type: ${grantType}`);
    await handler(ctx, next);
  };

  api.add(router, {
    method: 'post', path: '/token', summary: 'OAuth 2.0 token endpoint (RFC 6749 §3.2)', tags: ['oauth'], security: 'basic',
    responses: { 200: { description: 'tokens', schema: TokenResponse }, 400: { description: 'RFC 6749 §5.2 error' }, 401: { description: 'invalid_client' } },
  }, requireForm, authenticateClient(deps), dispatch);
  return router;
}
