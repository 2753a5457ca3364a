/**
 * Step-up re-authentication of the account page's session (docs/passkeys.md, "Pages"):
 * registering a passkey needs a sign-in from the last five minutes, so a user whose session is
 * older confirms it here with an email code sent to the session's own address.
 *
 * - GET /account/reauth: "we will email a code to <address>";
 * - POST /account/reauth/send: sends the code, bound to this session (`reauth:<session id>`),
 *   so only this session's code form can use it, and shows the code form;
 * - POST /account/reauth/verify: a right code makes the session's auth_time now and its acr and
 *   amr the email code's, in the transaction that consumes the code; back to /account.
 *
 * The forms carry the account page's CSRF token, and count against the IP's login form budget
 * like the login forms; the code's own budgets are the email-code service's.
 */
import { pageLocale } from '../../views/html.js';
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { ApiError, OAuthError } from '../../../shared/errors.js';
import { KNOWN_DEVICE_COOKIE } from '../../../shared/services/auth/policy.js';
import type { ApiRegistry } from '../../openapi.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie } from '../../cookies.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import { t } from '../../../shared/i18n/index.js';
import { reauthCodePage, reauthStartPage } from '../../views/account-passkeys.js';
import { requestMeta, retryAfter } from '../oauth/authorization.js';
import { accountForms } from './forms.js';

type Ctx = ParameterizedContext<AppState>;

/**
 * The client a re-authentication's code is recorded for: the account page is the service's
 * own, not a registered client's (the code's binding, not this name, ties it to the session).
 */
export const ACCOUNT_CLIENT_ID = 'account';

export function accountReauthRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { csrf, formOk, refused } = accountForms(deps);
  const signedIn = sessionAuth(deps, { page: true });
  const binding = (sessionId: string) => `reauth:${sessionId}`;

  /** The signed-in user's form context, or the refusal page (undefined). */
  const form = (ctx: Ctx) => {
    const me = ctx.state.session!;
    const b = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (!formOk(ctx)) {
      refused(ctx, true);
      return undefined;
    }
    return { me, b, token: csrf.tokenFor(me.session.id) };
  };

  api.page(router, { method: 'get', path: '/account/reauth', authenticate: signedIn }, (ctx) => {
    const me = ctx.state.session!;
    reauthStartPage(ctx, { email: me.user.email, csrf: csrf.tokenFor(me.session.id), locale: pageLocale(ctx) });
  });

  api.page(
    router,
    { method: 'post', path: '/account/reauth/send', parser: 'form', authenticate: signedIn },
    async (ctx) => {
      await deps.throttle.formPost(ctx.ip);
      const f = form(ctx);
      if (!f) return;
      const { me, token } = f;
      try {
        await deps.codes.sendCode({
          tenantId: me.session.tenant_id,
          clientId: ACCOUNT_CLIENT_ID,
          email: me.user.email,
          binding: binding(me.session.id),
          knownDevice: readCookie(ctx, KNOWN_DEVICE_COOKIE),
          allowSignup: false,
          meta: requestMeta(ctx),
          locale: pageLocale(ctx),
        });
      } catch (e) {
        if (e instanceof ApiError && e.status === 429) {
          ctx.set('Retry-After', retryAfter(e));
          return reauthStartPage(ctx, {
            email: me.user.email,
            csrf: token,
            error: e.message,
            status: 429,
            locale: pageLocale(ctx),
          });
        }
        throw e;
      }
      reauthCodePage(ctx, {
        email: me.user.email,
        csrf: token,
        notice: t(pageLocale(ctx), 'account.code.sent'),
        locale: pageLocale(ctx),
      });
    },
  );

  api.page(
    router,
    { method: 'post', path: '/account/reauth/verify', parser: 'form', authenticate: signedIn },
    async (ctx) => {
      await deps.throttle.formPost(ctx.ip);
      const f = form(ctx);
      if (!f) return;
      const { me, b, token } = f;
      const code = typeof b.code === 'string' ? b.code.trim() : '';
      try {
        // The code went to the session's own address, so this is the session's user; a session
        // that ended meanwhile is not renewed, and the code stays unspent (sign-in.ts, stepUp).
        await deps.signIn.stepUp(
          {
            emailCode: {
              tenantId: me.session.tenant_id,
              clientId: ACCOUNT_CLIENT_ID,
              email: me.user.email,
              code,
              binding: binding(me.session.id),
              knownDevice: readCookie(ctx, KNOWN_DEVICE_COOKIE),
              allowSignup: false,
              meta: requestMeta(ctx),
            },
          },
          { tenantId: me.session.tenant_id, sessionId: me.session.id, userId: me.user.id },
        );
      } catch (e) {
        if (e instanceof OAuthError || e instanceof ApiError) {
          if (e instanceof ApiError && e.status === 429) ctx.set('Retry-After', retryAfter(e));
          return reauthCodePage(ctx, {
            email: me.user.email,
            csrf: token,
            error: e.message,
            status: e instanceof ApiError ? e.status : 400,
            locale: pageLocale(ctx),
          });
        }
        throw e;
      }
      ctx.status = 303; // RFC 9110 §15.4.4
      ctx.redirect('/account?done=reauth#passkeys');
    },
  );

  return router;
}
