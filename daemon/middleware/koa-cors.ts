/**
 * CORS (the Fetch standard's CORS protocol) for browser-based clients, with @koa/cors. A route
 * declares its policy (`cors` in its spec, route-declarations.ts) and the registry mounts the
 * middleware made here on that route (docs/oauth.md, "CORS"):
 *
 * - `open`: public documents (discovery, the JWKS): `Access-Control-Allow-Origin: *` for every
 *   origin, without credentials (OIDC Discovery §4 and RFC 8414 §3 metadata, RFC 7517 keys).
 * - `client-origins`: only the origins registered for the client the request is made for
 *   (`allowed_origins`): the client_id of the form or of the Basic header (/token, /revoke),
 *   or the client_id of the access token (/userinfo).
 * - Every other route sends no CORS headers, so a browser keeps other origins' scripts out.
 *
 * Never `Access-Control-Allow-Credentials`: these endpoints take their credentials from the
 * request (a client_id, a code, a bearer token), never from a cookie, so a browser must not
 * send cookies with a cross-origin call to them.
 */
import cors from '@koa/cors';
import type { Middleware, ParameterizedContext } from 'koa';
import type { AppDeps, AppState } from '../context.js';
import type { RouteMounts } from '../route-declarations.js';
import { parseBasic } from '../../shared/services/client-auth.js';

type Ctx = ParameterizedContext<AppState>;

/** How long a browser may cache a preflight's answer, in seconds (Chromium caps it at 7200). */
export const CORS_PREFLIGHT_MAX_AGE = 600;

/**
 * The client a /token or /revoke request names: the Basic header's client_id, else the form's.
 * Not yet authenticated, and need not be: the answer carries tokens only if the client
 * authenticates (or, public, is the client the code was issued to), and an error otherwise.
 */
function formClientId(ctx: Ctx): string | undefined {
  const authz = ctx.get('Authorization');
  const basic = authz ? parseBasic(authz) : undefined;
  if (basic) return basic.id;
  const body = (ctx.request.body ?? {}) as Record<string, unknown>;
  return typeof body.client_id === 'string' ? body.client_id : undefined;
}

/** The client a /userinfo request is made for: the client_id of its (signature-verified) access token. */
async function bearerClientId(ctx: Ctx, deps: AppDeps): Promise<string | undefined> {
  // RFC 6750 §2.1 and RFC 9449 §7.1: a Bearer or a DPoP-bound token.
  const m = /^(?:Bearer|DPoP)\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(ctx.get('Authorization'));
  return m ? deps.tokens.accessTokenClientId(m[1]) : undefined;
}

/**
 * The CORS middleware of the client endpoints.
 *
 * A preflight (OPTIONS with Access-Control-Request-Method) carries no body and no Authorization
 * header, so it cannot name a client. It is allowed for an origin that is registered for some
 * active client of the service (one indexed lookup) and refused for any other: that keeps
 * scripts of unknown origins from sending non-simple requests (a bearer token, JSON, DPoP) here
 * at all. What protects the data is the actual response's Allow-Origin, which is given only to
 * the origins of the client that request is for; a preflight that passes for client A's origin
 * does not let it read client B's answers.
 */
function clientCors(deps: AppDeps, methods: string, clientOf: (ctx: Ctx) => Promise<string | undefined>): Middleware {
  return cors({
    origin: async (ctx) => {
      const origin = ctx.get('Origin');
      if (!origin) return '';
      if (ctx.method === 'OPTIONS') return (await deps.directory.isOriginRegistered(origin)) ? origin : '';
      const clientId = await clientOf(ctx);
      if (!clientId) return '';
      const found = await deps.directory.resolveClient(clientId);
      return found?.client.allowed_origins.includes(origin) ? origin : '';
    },
    credentials: false,
    allowMethods: methods,
    // RFC 6749 §2.3.1 and RFC 6750 §2.1 (Authorization), a form or JSON body (Content-Type),
    // RFC 9449 (DPoP), so a client that sends a DPoP proof is not refused at the preflight.
    allowHeaders: ['Authorization', 'Content-Type', 'DPoP'],
    // RFC 6750 §3: a client reads WWW-Authenticate to learn its token expired; Retry-After on a 429;
    // RFC 9449 §8: DPoP-Nonce, the nonce a browser client's next proof must carry.
    exposeHeaders: ['WWW-Authenticate', 'Retry-After', 'DPoP-Nonce'],
    maxAge: CORS_PREFLIGHT_MAX_AGE,
    keepHeadersOnError: true,
  }) as Middleware;
}

/**
 * The CORS middleware of a route's declared policy (RouteMounts.cors, built once in app.ts):
 * `form` reads the client from the Basic header or the form, so the route's body parser runs
 * before it; `token` from the bearer token.
 */
export function corsMounts(deps: AppDeps): RouteMounts['cors'] {
  const open = cors({ origin: '*', credentials: false, allowMethods: 'GET,HEAD', maxAge: CORS_PREFLIGHT_MAX_AGE });
  const form = (ctx: Ctx) => Promise.resolve(formClientId(ctx));
  const token = (ctx: Ctx) => bearerClientId(ctx, deps);
  return (policy, clientFrom, methods) => {
    if (policy === 'open') return open as Middleware<AppState>;
    // Made on the first request, when every route of the path has been declared.
    let mw: Middleware | undefined;
    return (ctx, next) =>
      (mw ??= clientCors(deps, methods(), clientFrom === 'form' ? form : token))(ctx, next) as Promise<void>;
  };
}
