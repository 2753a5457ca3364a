import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { sessionSid } from '../../../shared/crypto.js';
import type { Client } from '../../../shared/db/entities.js';
import {
  InvalidGrant,
  InvalidRequest,
  InvalidScope,
  InvalidTarget,
  UnauthorizedClient,
  UnsupportedGrantType,
} from '../../../shared/errors.js';
import { ReuseDetected } from '../../../shared/services/auth/oauth.js';
import { TOKEN_EXCHANGE_GRANT, tokenExchangeGrant } from './token-exchange.js';
import { ACCESS_TOKEN_TTL_S, ID_TOKEN_TTL_S } from '../../../shared/services/auth/policy.js';
import type { AppDeps } from '../../context.js';
import { authenticateClient, type ClientAuthState } from '../../middleware/koa-client-auth.js';
import type { ApiRegistry } from '../../openapi.js';

const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string(),
  id_token: z.string().optional(),
  refresh_token: z.string().optional(),
  issued_token_type: z.string().optional().describe('token exchange only (RFC 8693 §2.2.1)'),
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
  const sidOf = sessionSid(deps.config.secretKey);

  const requireForm: Middleware<ClientAuthState> = async (ctx, next) => {
    // RFC 6749 §3.2: the token endpoint takes application/x-www-form-urlencoded (the exact
    // header, as clients send it, is recognised without type-is parsing it).
    const type = ctx.req.headers['content-type'];
    if (type !== 'application/x-www-form-urlencoded' && !ctx.is('application/x-www-form-urlencoded'))
      throw new InvalidRequest('The token request must be application/x-www-form-urlencoded.');
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
    // An agent acting under an agent grant names it (docs/agents.md, "Tokens"): the token carries
    // the grant id and generation and is recorded as one of the grant's token families.
    const grantId = single(body, 'agent_grant_id');
    const bound =
      grantId === undefined ? undefined : await deps.agentGrants.bindToken(client.tenant_id, client.client_id, grantId);
    if (bound && !bound.ok) throw new InvalidGrant(bound.reason);
    const issued = await deps.tokens.issueAccessToken({
      sub: client.client_id,
      clientId: client.client_id,
      tenantId: client.tenant_id,
      scope: granted,
      audience: audience.includes(deps.config.issuer) ? audience : [...audience, deps.config.issuer],
      ttlSeconds: ACCESS_TOKEN_TTL_S,
      ...(bound?.ok ? { extra: bound.claims } : {}),
      alg: client.access_token_signed_response_alg,
    });
    if (bound?.ok)
      await deps.agentGrants.recordToken(client.tenant_id, {
        jti: issued.jti,
        grantId: grantId!,
        generation: bound.generation,
        expiresAt: (issued.claims.exp ?? 0) * 1000,
      });
    ctx.set('Pragma', 'no-cache');
    ctx.body = {
      access_token: issued.token,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      scope: granted.join(' '),
    };
  };

  /** Access token audience: the client's registered resources, or this issuer. */
  const audienceOf = (client: Client) => (client.audiences.length ? client.audiences : [deps.config.issuer]);

  /** Access token, ID token (when openid was granted) and the response body. */
  const userTokens = async (p: {
    client: Client;
    userId: string;
    scope: string[];
    familyId: string;
    nonce: string | null;
    authTimeMs: number;
    acr: string;
    amr: string[];
    idToken: boolean;
    /** The browser session the grant came through, for the ID token's `sid`. */
    sessionId?: string;
  }) => {
    // Custom claims bound to access tokens (docs/claims.md, "Bindings"); the protocol claims
    // are set after them, and no custom key may take a protocol claim's name anyway.
    const atClaims = await deps.customClaims.claimsForToken(p.client.tenant_id, p.userId, {
      tokenType: 'access_token',
      scopes: p.scope,
    });
    const at = await deps.tokens.issueAccessToken({
      sub: p.userId,
      clientId: p.client.client_id,
      tenantId: p.client.tenant_id,
      scope: p.scope,
      audience: audienceOf(p.client),
      ttlSeconds: ACCESS_TOKEN_TTL_S,
      familyId: p.familyId,
      extra: atClaims,
      alg: p.client.access_token_signed_response_alg,
    });
    const body: Record<string, unknown> = {
      access_token: at.token,
      token_type: 'Bearer',
      expires_in: at.expiresIn,
      scope: p.scope.join(' '),
    };
    if (p.idToken && p.scope.includes('openid')) {
      const user = await deps.sessions.findUser(p.client.tenant_id, p.userId);
      const claims: Record<string, unknown> = user
        ? await deps.customClaims.claimsForToken(p.client.tenant_id, p.userId, {
            tokenType: 'id_token',
            scopes: p.scope,
          })
        : {};
      // The standard claims of the granted scopes (OIDC Core §5.4), the same as UserInfo's.
      if (user) Object.assign(claims, await deps.directory.standardClaimsFor(user, p.scope));
      body.id_token = await deps.tokens.issueIdToken({
        sub: p.userId,
        clientId: p.client.client_id,
        tenantId: p.client.tenant_id,
        nonce: p.nonce,
        authTimeMs: p.authTimeMs,
        acr: p.acr,
        amr: p.amr,
        ...(p.sessionId ? { sid: sidOf(p.sessionId) } : {}),
        ttlSeconds: ID_TOKEN_TTL_S,
        claims,
        alg: p.client.id_token_signed_response_alg,
      });
    }
    return body;
  };

  /** Replay of a code or refresh token: the service has revoked the family; say so, then refuse. */
  const loggingReuse = async <T>(log: Logger, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ReuseDetected)
        log.warn({ familyId: e.familyId, reason: e.reason }, 'token family revoked on reuse');
      throw e;
    }
  };

  // RFC 6749 §4.1.3
  const authorizationCode: Middleware<ClientAuthState> = async (ctx) => {
    const client = ctx.state.client!;
    const body = ctx.request.body as Record<string, unknown>;
    if (!client.grant_types.includes('authorization_code'))
      throw new UnauthorizedClient('This client may not use the authorization_code grant.');
    const code = single(body, 'code');
    if (!code) throw new InvalidRequest('code is required.');
    const { code: row, refreshToken } = await loggingReuse(ctx.state.log, () =>
      deps.oauth.exchangeCode(client, {
        code,
        redirectUri: single(body, 'redirect_uri'),
        codeVerifier: single(body, 'code_verifier'),
      }),
    );
    const out = await userTokens({
      client,
      userId: row.user_id,
      scope: row.scope,
      familyId: row.family_id,
      nonce: row.nonce,
      authTimeMs: row.auth_time,
      acr: row.acr,
      amr: row.amr,
      idToken: true,
      sessionId: row.session_id,
    });
    if (refreshToken) out.refresh_token = refreshToken;
    ctx.set('Pragma', 'no-cache');
    ctx.body = out;
  };

  // RFC 6749 §6, rotated per RFC 9700 §4.14.2
  const refreshToken: Middleware<ClientAuthState> = async (ctx) => {
    const client = ctx.state.client!;
    const body = ctx.request.body as Record<string, unknown>;
    if (!client.grant_types.includes('refresh_token'))
      throw new UnauthorizedClient('This client may not use the refresh_token grant.');
    const token = single(body, 'refresh_token');
    if (!token) throw new InvalidRequest('refresh_token is required.');
    const requested = parseScope(single(body, 'scope'));
    const { family, refreshToken: next } = await loggingReuse(ctx.state.log, () =>
      deps.oauth.rotateRefreshToken(client, token, requested),
    );
    const out = await userTokens({
      client,
      userId: family.user_id!,
      scope: requested ?? family.scope,
      familyId: family.id,
      nonce: null,
      authTimeMs: 0,
      acr: '',
      amr: [],
      idToken: false,
    });
    out.refresh_token = next;
    ctx.set('Pragma', 'no-cache');
    ctx.body = out;
  };

  const grants: Record<string, Middleware<ClientAuthState>> = {
    client_credentials: clientCredentials,
    authorization_code: authorizationCode,
    refresh_token: refreshToken,
    [TOKEN_EXCHANGE_GRANT]: tokenExchangeGrant(deps),
  };

  const dispatch: Middleware<ClientAuthState> = async (ctx, next) => {
    const grantType = single(ctx.request.body as Record<string, unknown>, 'grant_type');
    if (!grantType) throw new InvalidRequest('grant_type is required.');
    const handler = grants[grantType];
    if (!handler) throw new UnsupportedGrantType(`Unsupported grant_type: ${grantType}`);
    await handler(ctx, next);
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
      cors: 'client-origins',
      authenticate: authenticateClient(deps),
      responses: {
        200: { description: 'tokens (Cache-Control: no-store)', schema: TokenResponse },
        400: { description: 'RFC 6749 §5.2 error' },
        401: { description: 'invalid_client' },
      },
    },
    requireForm,
    dispatch,
  );
  return router;
}
