/**
 * Signing in through a tenant's upstream OpenID provider (docs/identity-providers.md):
 * - POST /login/upstream/start: a "Continue with <name>" button of the login page. It continues
 *   a saved authorization request (CSRF-checked like the email forms), stores the pending
 *   upstream request and redirects the browser to the upstream's authorization endpoint.
 * - GET /login/upstream/callback: the upstream's redirect back (the redirect URI operators
 *   register there). The code is redeemed, the upstream user linked to a local one, and the
 *   browser session created with the consumed authorization request in one transaction; the
 *   browser then continues at /authorize exactly as after an email-code login (consent, code).
 *
 * The pending request is bound to the browser by a cookie (`iam_upstream`, HttpOnly,
 * SameSite=Lax so that the upstream's top-level redirect carries it), whose hash is stored with
 * it; a callback from another browser is refused (RFC 6749 §10.12, login CSRF).
 */
import Router from '@koa/router';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../../../shared/services/auth/policy.js';
import {
  UPSTREAM_CALLBACK_PATH,
  UPSTREAM_STATE_TTL_MS,
  UpstreamLoginError,
} from '../../../shared/services/upstream-idp/index.js';
import type { ApiRegistry } from '../../openapi.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie, setCookie } from '../../cookies.js';
import { t } from '../../../shared/i18n/index.js';
import { errorPage, serviceSentence } from '../../views/html.js';
import { emailStep } from '../../views/login.js';
import { authorizationFlow, requestMeta, type Ctx } from './authorization.js';

/** The cookie that binds a pending upstream sign-in to the browser that started it. */
export const UPSTREAM_COOKIE = 'iam_upstream';

export function upstreamLoginRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { secure, formContext, continuationUrl, csrfFor, lookFor } = authorizationFlow(deps);
  const broker = deps.upstreamBroker;

  /** Sends the browser to the upstream, binding the pending request to it. */
  const redirectUpstream = (ctx: Ctx, started: { url: string; browserToken: string }) => {
    setCookie(ctx, UPSTREAM_COOKIE, started.browserToken, { maxAgeSeconds: UPSTREAM_STATE_TTL_MS / 1000, secure });
    ctx.status = 303;
    ctx.redirect(started.url);
  };

  /**
   * A refused upstream sign-in: back to the login page of the same authorization request with
   * the reason, when that request can still be continued; else a page saying what happened.
   */
  const refused = async (ctx: Ctx, e: UpstreamLoginError, status = 400) => {
    deps.logger.info({ failure: e.failure, requestId: ctx.state.requestId }, 'upstream sign-in refused');
    const req = e.authRequestId ? await deps.oauth.getAuthRequest(e.authRequestId) : undefined;
    const found =
      req && !req.consumed
        ? await deps.clientMetadata.resolveClient(req.params.client_id, req.tenantId, { fetch: true })
        : null;
    const look = await lookFor(ctx, req?.tenantId, req?.params.ui_locales);
    if (!req || req.consumed || !found || found.client.status !== 'active' || found.tenantState !== 'active')
      return errorPage(ctx, status, 'notCompleted', look, serviceSentence(look, e.message));
    emailStep(ctx, {
      challenge: e.authRequestId!,
      csrf: csrfFor(ctx, e.authRequestId!),
      clientName: found.client.name,
      look,
      error: serviceSentence(look, e.message) ?? t(look.locale, 'login.upstreamRefused'),
      status,
      providers: await broker.buttons(found.client.tenant_id),
    });
  };

  api.page(router, { method: 'post', path: '/login/upstream/start', parser: 'form' }, async (ctx) => {
    await deps.throttle.formPost(ctx.ip);
    const f = await formContext(ctx);
    if (!f) return;
    const provider = typeof f.b.provider === 'string' ? f.b.provider.slice(0, 64) : '';
    try {
      redirectUpstream(
        ctx,
        await broker.begin({
          tenantId: f.client.tenant_id,
          provider,
          authRequestId: f.challenge,
          browserToken: readCookie(ctx, UPSTREAM_COOKIE),
        }),
      );
    } catch (e) {
      if (e instanceof UpstreamLoginError) return refused(ctx, e, e.failure === 'provider_unavailable' ? 503 : 400);
      throw e;
    }
  });

  api.page(router, { method: 'get', path: UPSTREAM_CALLBACK_PATH }, async (ctx) => {
    await deps.throttle.formPost(ctx.ip);
    const q = ctx.query;
    try {
      const opened = await broker.open(
        typeof q.state === 'string' ? q.state : undefined,
        readCookie(ctx, UPSTREAM_COOKIE),
      );
      const req = await deps.oauth.getAuthRequest(opened.row.auth_request_id);
      const found =
        req && !req.consumed
          ? await deps.clientMetadata.resolveClient(req.params.client_id, req.tenantId, { fetch: true })
          : null;
      if (!req || req.consumed || !found || found.client.status !== 'active' || found.tenantState !== 'active')
        return errorPage(ctx, 400, 'expired', await lookFor(ctx, req?.tenantId, req?.params.ui_locales));
      const client = found.client;
      // The callback URL as the upstream was told it (our issuer, not whatever Host reached
      // us), with the query it sent: openid-client checks `state` and `iss` (RFC 9207) in it.
      const callbackUrl = new URL(`${deps.config.issuer}${UPSTREAM_CALLBACK_PATH}${ctx.search}`);
      const created = await deps.signIn.session(
        { upstream: { opened, callbackUrl, allowSignup: found.allowSignup } },
        {
          clientId: client.client_id,
          meta: requestMeta(ctx),
          authRequest: { tenantId: opened.tenantId, id: opened.row.auth_request_id, via: 'page' },
        },
      );
      setCookie(ctx, SESSION_COOKIE, created.cookie, { maxAgeSeconds: SESSION_TTL_MS / 1000, secure });
      setCookie(ctx, UPSTREAM_COOKIE, '', { maxAgeSeconds: 0, secure });
      ctx.status = 303;
      ctx.redirect(continuationUrl(opened.row.auth_request_id, created.session.id, req.params));
    } catch (e) {
      if (e instanceof UpstreamLoginError) return refused(ctx, e, e.failure === 'provider_unavailable' ? 503 : 400);
      throw e;
    }
  });

  return router;
}

/**
 * Re-authentication at /authorize (authorize.ts): a signed-in user whose link at an upstream
 * needs a new sign-in there (the refresh of its tokens was refused for good) is sent through
 * that upstream before the authorization continues. `authRequestId`: the request saved for it.
 */
export async function startReauthentication(
  deps: AppDeps,
  ctx: Ctx,
  p: { tenantId: string; providerId: string; userId: string; authRequestId: string },
): Promise<void> {
  const secure = deps.config.issuer.startsWith('https:');
  const started = await deps.upstreamBroker.begin({
    tenantId: p.tenantId,
    provider: p.providerId,
    authRequestId: p.authRequestId,
    browserToken: readCookie(ctx, UPSTREAM_COOKIE),
    userHint: p.userId,
  });
  setCookie(ctx, UPSTREAM_COOKIE, started.browserToken, { maxAgeSeconds: UPSTREAM_STATE_TTL_MS / 1000, secure });
  ctx.status = 302;
  ctx.redirect(started.url);
}
