/**
 * Dynamic client registration (RFC 7591 §3) and its management (RFC 7592 §2), docs/registration.md.
 * The handlers only read the request and call deps.registration.endpoint; the RFC's errors
 * (`invalid_client_metadata`, `invalid_redirect_uri`, `invalid_software_statement`,
 * `unapproved_software_statement`, 401 `invalid_token`) are OAuthErrors the one renderer
 * answers as `{error, error_description}`. The body is read by the JSON parser and checked by the
 * service, not the guard, so a bad member is RFC 7591's error, not the admin API's.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { ErrorObject } from '../../openapi.js';

type Ctx = ParameterizedContext<AppState>;

const ClientParam = z.strictObject({ clientId: z.string().min(1).max(128) });
const Metadata = z.looseObject({ client_id: z.string() }).describe('RFC 7591 §3.2.1 client information');

const rfc7591Errors = {
  400: {
    description:
      'RFC 7591 §3.2.2: invalid_client_metadata, invalid_redirect_uri, invalid_software_statement, ' +
      'unapproved_software_statement',
    schema: ErrorObject,
  },
};
const tokenError = {
  401: { description: 'invalid_token (RFC 6750 §3.1): missing or wrong Bearer token', schema: ErrorObject },
};

export function registrationEndpointRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const endpoint = `${deps.config.issuer}/register`;
  const tags = ['oauth: registration'];
  const rc = (ctx: Ctx) => ({
    authorization: ctx.get('Authorization') || undefined,
    ip: ctx.ip,
    requestId: ctx.state.requestId,
    endpoint,
  });
  const noStore = (ctx: Ctx) => {
    // RFC 7591 §3.2.1 / RFC 7592 §3: the answer holds credentials.
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
  };

  api.add(
    router,
    {
      method: 'post',
      path: '/register',
      operationId: 'registerClient',
      summary:
        'Dynamic client registration (RFC 7591 §3): anonymous when the tenant is open, else with an initial ' +
        "access token (Authorization: Bearer); the tenant is the token's, the body's tenant_id, or the default",
      tags,
      security: 'none',
      parser: 'json',
      responses: {
        201: { description: 'the client, its credentials and registration access token', schema: Metadata },
        ...rfc7591Errors,
        ...tokenError,
        403: { description: 'access_denied: registration is closed in the tenant', schema: ErrorObject },
        429: {
          description: "slow_down: the open policy's per-IP or per-tenant limit (Retry-After)",
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const body = await deps.registration.endpoint.register(ctx.request.body, rc(ctx));
      noStore(ctx);
      ctx.status = 201;
      ctx.body = body;
    },
  );

  const common = { path: '/register/:clientId', tags, security: 'none' as const, params: ClientParam };
  api.add(
    router,
    {
      ...common,
      method: 'get',
      operationId: 'readClientRegistration',
      summary: 'Read a registration (RFC 7592 §2.1) with its registration access token (Bearer)',
      responses: { 200: { description: 'the client as registered', schema: Metadata }, ...tokenError },
    },
    async (ctx) => {
      const body = await deps.registration.endpoint.read(ctx.state.guard.params.clientId, rc(ctx));
      noStore(ctx);
      ctx.body = body;
    },
  );
  api.add(
    router,
    {
      ...common,
      method: 'put',
      parser: 'json',
      operationId: 'updateClientRegistration',
      summary:
        'Replace a registration (RFC 7592 §2.2), validated as the admin API validates a client; the answer ' +
        'carries a new registration access token, and the old one stops working',
      responses: {
        200: { description: 'the client as registered now', schema: Metadata },
        ...rfc7591Errors,
        ...tokenError,
      },
    },
    async (ctx) => {
      const body = await deps.registration.endpoint.update(ctx.state.guard.params.clientId, ctx.request.body, rc(ctx));
      noStore(ctx);
      ctx.body = body;
    },
  );
  api.add(
    router,
    {
      ...common,
      method: 'delete',
      operationId: 'deleteClientRegistration',
      summary: 'Delete a registration (RFC 7592 §2.3): the client and its tokens stop working',
      responses: { 204: { description: 'deleted' }, ...tokenError },
    },
    async (ctx) => {
      await deps.registration.endpoint.delete(ctx.state.guard.params.clientId, rc(ctx));
      ctx.status = 204;
    },
  );
  return router;
}
