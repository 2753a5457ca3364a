/**
 * POST /introspect (RFC 7662), as the spec orders it:
 *   1 authenticate the client   2 decode and verify the JWT   3 check exp
 *   4 check revocation (every request, cache hits included)   5 strict audience and client
 * Each step is a named function so the order reads here and stack traces name the step.
 *
 * Who may see what (docs/introspection.md):
 * - The caller must be a confidential client. It authenticates with HTTP Basic (the spec's
 *   method), client_secret_post or private_key_jwt, whichever it is registered for.
 * - A caller only ever sees tokens of its own tenant.
 * - A resource server (a client with resource identifiers) sees any token of its tenant; with
 *   strict introspection only tokens whose `aud` names one of its resource identifiers.
 * - Any other client sees only tokens issued to itself.
 * Every "no" is the same `{"active": false}` (RFC 7662 §2.2), so the answer leaks nothing.
 *
 * Resource servers call this on every request they serve, so its chain is lean: an ordinary
 * declared route (ApiRegistry.add) whose declared body parser is its own form reader (no
 * koa-body, no depth limit: the form is flat), then the caller's authentication, then the
 * answer; no guard, no CORS, no tenant check.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import coBody from 'co-body';
import { parse as parseForm, type ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';
import type { Client } from '../../../shared/db/entities.js';
import { InvalidRequest } from '../../../shared/errors.js';
import type { CachedToken, IntrospectionService } from '../../../shared/services/introspection.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { bodyReadError } from '../../middleware/koa-body-errors.js';
import { presentedCredentials } from '../../middleware/koa-client-auth.js';
import { IntrospectionForm } from '../../../shared/schemas/oauth-forms.js';
import { INTROSPECTION_JWT_MEDIA } from '../../../shared/services/signed-responses.js';

/** How long a caller's registration is reused before it is read again in full (shared/services/secret-callers.ts). */
export { CALLER_CACHE_MS } from '../../../shared/services/secret-callers.js';

export const INACTIVE = '{"active":false}';

export class Introspector {
  constructor(
    private readonly deps: AppDeps,
    private readonly service: IntrospectionService,
  ) {}

  /**
   * Steps 2 to 5 for a caller that step 1 (`authenticateCaller`, the route's authentication,
   * which runs before the form is read) authenticated: returns the JSON body, or throws an
   * OAuthError (400).
   */
  async introspect(caller: Client, isForm: boolean, tokenParam: unknown): Promise<string> {
    const token = this.parseToken(isForm, tokenParam);
    const verified = await this.service.verify(token);
    if (!('entry' in verified)) return INACTIVE;
    if (await this.service.revoked(verified.entry)) return INACTIVE;
    if (!verified.cached) this.service.remember(token, verified.entry);
    if (!this.visibleTo(caller, verified.entry)) return INACTIVE;
    return this.respond(verified.entry);
  }

  // ---- step 1 ----
  /**
   * The caller's authentication (docs/oauth.md, "Client authentication"), or InvalidClient
   * (401): a confidential client, with the method it is registered for, through the service
   * every endpoint shares. HTTP Basic (RFC 7662 §2.1, what resource servers send on every
   * request) is checked against the daemon's memory of the caller's registration, its stamp read
   * on each call (shared/services/secret-callers.ts), so a successful call adds no write.
   * Failures count against the client's and the IP's budgets (docs/security.md); a spent budget
   * is answered 429.
   */
  async authenticateCaller(authorization: string, form: ParsedUrlQuery | undefined, ip: string): Promise<Client> {
    const presented = presentedCredentials(authorization, form ?? {});
    const { client, method } = await this.deps.clientAuth.authenticate(presented, ip, { allowPublic: false });
    // FAPI 2.0 §5.3.2.1: a caller under the profile authenticates with private_key_jwt (the
    // profile is cached per tenant: no read).
    await this.deps.fapi.checkClientAuthentication(client, method, presented.client_assertion);
    return client;
  }

  private parseToken(isForm: boolean, token: unknown): string {
    if (!isForm) throw new InvalidRequest('The request must be application/x-www-form-urlencoded (RFC 7662 §2.1).');
    if (typeof token !== 'string' || token.length === 0) throw new InvalidRequest('token is required, once.');
    return token;
  }

  // ---- step 5 ----
  private visibleTo(caller: Client, entry: CachedToken): boolean {
    if (entry.tenantId !== caller.tenant_id) return false;
    if (caller.resource_identifiers.length === 0) return entry.clientId === caller.client_id;
    if (!caller.strict_introspection) return true;
    return entry.aud.some((a) => caller.resource_identifiers.includes(a));
  }

  /** The active response, built from the entry and its shared profile. */
  private respond(entry: CachedToken): string {
    return entry.json();
  }
}

interface IntrospectionState extends AppState {
  /** The authenticated caller (step 1). */
  caller?: Client;
  /** The request's parameters, when it is a form; a repeated one is an array. */
  form?: ParsedUrlQuery;
}

/**
 * Whether the caller's Accept asks for RFC 9701's JWT over JSON. A header that does not name it
 * (most callers send none) costs no negotiation.
 */
function wantsJwt(ctx: ParameterizedContext): boolean {
  const accept = ctx.req.headers.accept;
  if (!accept?.toLowerCase().includes(INTROSPECTION_JWT_MEDIA)) return false;
  return ctx.accepts(INTROSPECTION_JWT_MEDIA, 'application/json') === INTROSPECTION_JWT_MEDIA;
}

/** The form's media type, as resource servers send it (RFC 7662 §2.1). */
const FORM = 'application/x-www-form-urlencoded';

export function introspectionRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  type Ctx = ParameterizedContext<IntrospectionState>;
  const introspector = new Introspector(deps, deps.introspection);
  const router = new Router<AppState>();
  const Active = z.looseObject({
    active: z.literal(true),
    sub: z.string(),
    scope: z.string(),
    client_id: z.string(),
    aud: z.union([z.string(), z.array(z.string())]),
    iss: z.string(),
    exp: z.number().int(),
    iat: z.number().int(),
    jti: z.string(),
    token_type: z.string().describe('DPoP for a DPoP-bound token (RFC 9449 §6.2), else Bearer'),
    tenant: z.string(),
    cnf: z
      .looseObject({ jkt: z.string() })
      .optional()
      .describe(
        'RFC 9449 §6.2: the thumbprint of the key a DPoP-bound token is bound to; ' +
          "a resource server compares it with the proof's key",
      ),
    act: z.looseObject({}).optional(),
    /** RFC 9493 `iss_sub`: the subject is another issuer's (an exchanged ID-JAG, docs/token-exchange.md). */
    sub_id: z.looseObject({ format: z.string(), iss: z.string(), sub: z.string() }).optional(),
    resource: z.union([z.string(), z.array(z.string())]).optional(),
  });

  // RFC 7662 §2.1: the parameters come as a form. co-body (the reader under koa-body) reads it,
  // so the body limit and Content-Encoding (gzip, deflate, br; the limit counts the inflated
  // bytes) are the other endpoints'; node:querystring parses it instead of koa-body's qs, about
  // 8 % of this endpoint's CPU less (bench/results/introspect-sqlite.md). A repeated parameter
  // is an array either way. A body that is not a form is left unread, and refused by the steps.
  const limit = deps.config.bodyLimitBytes;
  const readForm = async (ctx: Ctx): Promise<void> => {
    // The exact header resource servers send is recognised without parsing it; anything else
    // (parameters, other case) is left to type-is, as before. A Content-Length or a chunked
    // body is what type-is calls a body.
    const h = ctx.req.headers;
    const isForm =
      h['content-type'] === FORM && (h['content-length'] !== undefined || h['transfer-encoding'] !== undefined)
        ? true
        : Boolean(ctx.is(FORM));
    if (!isForm) return;
    let text: string;
    try {
      text = (await coBody.text(ctx, { limit })) as string;
    } catch (e) {
      throw bodyReadError(e);
    }
    ctx.state.form = parseForm(text);
  };
  const answer = async (ctx: Ctx): Promise<void> => {
    const form = ctx.state.form;
    const caller = ctx.state.caller!;
    const json = await introspector.introspect(caller, form !== undefined, form?.token);
    // RFC 9701 §4, §5: a caller that asks for it (Accept) or registered an algorithm for it gets
    // the same answer inside a signed JWT. The answer is built first, so the cache in front of
    // verification (docs/introspection.md) serves both alike.
    const alg = caller.introspection_signed_response_alg;
    if (alg || wantsJwt(ctx)) {
      ctx.type = INTROSPECTION_JWT_MEDIA;
      ctx.body = await deps.responseSigner.introspectionResponse({ callerId: caller.client_id, alg, json });
      return;
    }
    ctx.type = 'application/json';
    ctx.body = json;
  };

  // The form reader is this route's declared body parser, in place of koa-body: a body too
  // large, badly encoded or in an unknown encoding is refused as on every endpoint (400, 413,
  // 415), before authentication; nothing else (no guard, no depth limit: the form is flat).
  api.add(
    router,
    {
      method: 'post',
      path: '/introspect',
      operationId: 'introspectToken',
      summary: 'Token introspection (RFC 7662) with a revocation-correct cache',
      tags: ['oauth'],
      security: 'basic',
      form: IntrospectionForm,
      parser: {
        read: async (ctx, next) => {
          await readForm(ctx);
          await next();
        },
      },
      authenticate: async (ctx, next) => {
        const c = ctx as Ctx;
        c.state.caller = await introspector.authenticateCaller(c.req.headers.authorization ?? '', c.state.form, c.ip);
        await next();
      },
      responses: {
        200: {
          description:
            'active token with its claims, or exactly {"active": false}; as application/token-introspection+jwt ' +
            '(RFC 9701) when the Accept header asks for it or the caller registered ' +
            'introspection_signed_response_alg: ' +
            'a signed JWT with iss, aud (the caller), iat, jti and token_introspection (this object)',
          schema: z.union([Active, z.object({ active: z.literal(false) })]),
        },
        400: { description: 'invalid_request' },
        401: { description: 'invalid_client' },
        413: { description: 'request_too_large' },
        429: { description: 'slow_down: too many failed client authentications (Retry-After)' },
        415: { description: 'unsupported_media_type (a Content-Encoding other than gzip, deflate or br)' },
      },
    },
    (ctx) => answer(ctx as Ctx),
  );
  return router;
}
