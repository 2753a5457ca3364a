/**
 * The login forms GET /authorize shows (POST /login/email-code, POST /login/verify): the
 * email address, then the code. Each form continues a saved authorization request, and carries
 * a CSRF token bound to it (authorization.ts). A right code creates the browser session and
 * consumes the request in the transaction that consumes the code; the browser then goes back to
 * /authorize with the client's own request and a marker that its login is done, which issues the
 * code or, when the user must still consent, shows the consent page (authorization.ts).
 *
 * A code belongs to the authorization request its form continues (binding `ar:<id>`), so
 * another browser's guesses and sends never touch it (docs/security.md). Both forms count
 * against the posting IP's budget.
 */
import Router from '@koa/router';
import { ApiError, OAuthError } from '../../../shared/errors.js';
import { email as emailSchema } from '../../../shared/schemas/common.js';
import { KNOWN_DEVICE_TTL_S } from '../../../shared/services/auth/codes.js';
import { KNOWN_DEVICE_COOKIE, SESSION_COOKIE, SESSION_TTL_MS } from '../../../shared/services/auth/policy.js';
import type { CreatedSession } from '../../../shared/services/auth/sessions.js';
import type { ApiRegistry } from '../../openapi.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie, setCookie } from '../../cookies.js';
import { serviceSentence, type PageLook } from '../../views/html.js';
import { codeStep, emailStep } from '../../views/login.js';
import { t } from '../../../shared/i18n/index.js';
import { authorizationFlow, requestMeta, retryAfter } from './authorization.js';

/**
 * The sentence a refused send or check shows: the service's own on an English page (it names
 * the reason precisely), else the catalogue's for the kind of refusal (docs/localisation.md).
 */
function refusal(look: PageLook, e: ApiError | OAuthError): string {
  const own = serviceSentence(look, e.message);
  if (own !== undefined) return own;
  if (e instanceof ApiError && e.status === 429)
    return t(look.locale, 'login.throttled', { count: Number(retryAfter(e)) });
  if (e instanceof OAuthError) return t(look.locale, 'login.codeRefused');
  return t(look.locale, 'login.completed');
}

export function loginFormRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { secure, formContext, continuationUrl } = authorizationFlow(deps);

  api.page(router, { method: 'post', path: '/login/email-code', parser: 'form' }, async (ctx) => {
    await deps.throttle.formPost(ctx.ip);
    const f = await formContext(ctx);
    if (!f) return;
    const parsed = emailSchema.safeParse(f.b.email);
    if (!parsed.success)
      return emailStep(ctx, {
        challenge: f.challenge,
        csrf: f.csrf,
        clientName: f.client.name,
        look: f.look,
        providers: await deps.upstreamBroker.buttons(f.client.tenant_id),
        email: typeof f.b.email === 'string' ? f.b.email : '',
        error: t(f.look.locale, 'login.invalidEmail'),
        status: 400,
      });
    try {
      await deps.codes.sendCode({
        tenantId: f.client.tenant_id,
        clientId: f.client.client_id,
        email: parsed.data,
        binding: `ar:${f.challenge}`,
        knownDevice: readCookie(ctx, KNOWN_DEVICE_COOKIE),
        allowSignup: f.allowSignup,
        meta: requestMeta(ctx),
        // The code mail speaks the login page's language (ui_locales, else Accept-Language).
        locale: f.look.locale,
      });
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) {
        ctx.set('Retry-After', retryAfter(e));
        return codeStep(ctx, {
          challenge: f.challenge,
          csrf: f.csrf,
          clientName: f.client.name,
          look: f.look,
          email: parsed.data,
          error: refusal(f.look, e),
          status: 429,
        });
      }
      throw e;
    }
    codeStep(ctx, {
      challenge: f.challenge,
      csrf: f.csrf,
      clientName: f.client.name,
      look: f.look,
      email: parsed.data,
      notice: t(f.look.locale, 'login.codeSent'),
    });
  });

  api.page(router, { method: 'post', path: '/login/verify', parser: 'form' }, async (ctx) => {
    await deps.throttle.formPost(ctx.ip);
    const f = await formContext(ctx);
    if (!f) return;
    const email = emailSchema.safeParse(f.b.email);
    const code = typeof f.b.code === 'string' ? f.b.code.trim() : '';
    if (!email.success)
      return emailStep(ctx, {
        challenge: f.challenge,
        csrf: f.csrf,
        clientName: f.client.name,
        look: f.look,
        providers: await deps.upstreamBroker.buttons(f.client.tenant_id),
        error: t(f.look.locale, 'login.emailAgain'),
        status: 400,
      });
    let created: CreatedSession;
    try {
      // The consumed code, the session and the consumed request commit together (sign-in.ts).
      created = await deps.signIn.session(
        {
          emailCode: {
            tenantId: f.client.tenant_id,
            clientId: f.client.client_id,
            email: email.data,
            code,
            binding: `ar:${f.challenge}`,
            knownDevice: readCookie(ctx, KNOWN_DEVICE_COOKIE),
            allowSignup: f.allowSignup,
            meta: requestMeta(ctx),
          },
        },
        {
          clientId: f.client.client_id,
          meta: requestMeta(ctx),
          authRequest: { tenantId: f.req.tenantId, id: f.challenge, via: 'page' },
        },
      );
    } catch (e) {
      if (e instanceof OAuthError || e instanceof ApiError) {
        if (e instanceof ApiError && e.status === 429) ctx.set('Retry-After', retryAfter(e));
        return codeStep(ctx, {
          challenge: f.challenge,
          csrf: f.csrf,
          clientName: f.client.name,
          look: f.look,
          email: email.data,
          error: refusal(f.look, e),
          status: e instanceof ApiError ? e.status : 400,
        });
      }
      throw e;
    }
    setCookie(ctx, SESSION_COOKIE, created.cookie, { maxAgeSeconds: SESSION_TTL_MS / 1000, secure });
    // This browser now has the address's throttling budgets to itself (docs/security.md).
    setCookie(ctx, KNOWN_DEVICE_COOKIE, deps.codes.knownDeviceToken(f.client.tenant_id, email.data), {
      maxAgeSeconds: KNOWN_DEVICE_TTL_S,
      secure,
    });
    ctx.status = 303; // RFC 9110 §15.4.4: the follow-up is a GET
    ctx.redirect(continuationUrl(f.challenge, created.session.id, f.req.params));
  });

  return router;
}
