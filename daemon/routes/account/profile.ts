/**
 * The account page's profile forms (docs/directory.md, "The account page"):
 *
 * - POST /account/profile/name: renames the user (1 to 200 characters after trimming),
 *   audited with the user as actor;
 * - POST /account/email/send: sends a code to the new address (shared/services/auth/profile.ts).
 *   Only for a sign-in from the last five minutes (as adding a passkey, reauth.ts): whoever
 *   holds a session left open must not be able to move the account to their own address,
 *   which would also take the account's recovery. A stale session gets 403 and the link to
 *   /account/reauth;
 * - POST /account/email/confirm: the code from the new address changes it; the old address is
 *   told. The new address rides in the form (a hidden field): the pending change itself is the
 *   code's row in the database, so any daemon confirms it.
 *
 * Every form carries the page's CSRF token (forms.ts) and counts against the IP's login form
 * budget; the code's own budgets are the sign-in codes'.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { ApiError } from '../../../shared/errors.js';
import { displayName, email as emailSchema } from '../../../shared/schemas/common.js';
import type { AppDeps, AppState } from '../../context.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import type { ApiRegistry } from '../../openapi.js';
import { emailCodePage, emailFormPage } from '../../views/account-profile.js';
import { esc, renderPage, pageLocale } from '../../views/html.js';
import { t } from '../../../shared/i18n/index.js';
import { retryAfter } from '../oauth/authorization.js';
import { accountForms } from './forms.js';

type Ctx = ParameterizedContext<AppState>;

export function accountProfileRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { csrf, formOk, refused } = accountForms(deps);
  const signedIn = sessionAuth(deps, { page: true });
  const service = deps.accountProfile;

  /** The signed-in user's form: its fields and the page's token; undefined after the refusal page. */
  const form = (ctx: Ctx) => {
    if (!formOk(ctx)) {
      refused(ctx, true);
      return undefined;
    }
    const me = ctx.state.session!;
    const b = (ctx.request.body ?? {}) as Record<string, unknown>;
    return { me, b, token: csrf.tokenFor(me.session.id) };
  };
  /** A refusal the service names (its status and message), with Retry-After on a 429. */
  const shown = (ctx: Ctx, e: unknown): ApiError => {
    if (!(e instanceof ApiError)) throw e;
    if (e.status === 429) ctx.set('Retry-After', retryAfter(e));
    return e;
  };

  api.page(
    router,
    { method: 'post', path: '/account/profile/name', parser: 'form', authenticate: signedIn },
    async (ctx) => {
      await deps.throttle.formPost(ctx.ip);
      const f = form(ctx);
      if (!f) return;
      const name = displayName.safeParse(f.b.name);
      if (!name.success)
        return renderPage(ctx, {
          status: 400,
          title: t(pageLocale(ctx), 'account.name.invalid'),
          locale: pageLocale(ctx),
          body:
            `<h1>${esc(t(pageLocale(ctx), 'account.name.invalid'))}</h1>` +
            `<p role="alert">${esc(t(pageLocale(ctx), 'account.name.rule'))}</p>` +
            `<p><a href="/account#profile">${esc(t(pageLocale(ctx), 'account.back'))}</a></p>`,
        });
      const { me } = f;
      await service.rename(me.session.tenant_id, me.user.id, name.data, {
        type: 'user',
        id: me.user.id,
        requestId: ctx.state.requestId,
      });
      ctx.status = 303; // RFC 9110 §15.4.4
      ctx.redirect('/account?done=name#profile');
    },
  );

  api.page(
    router,
    { method: 'post', path: '/account/email/send', parser: 'form', authenticate: signedIn },
    async (ctx) => {
      await deps.throttle.formPost(ctx.ip);
      const f = form(ctx);
      if (!f) return;
      const { me, b, token } = f;
      const raw = typeof b.email === 'string' ? b.email.slice(0, 300) : '';
      const parsed = emailSchema.safeParse(raw);
      if (!parsed.success)
        return emailFormPage(ctx, {
          csrf: token,
          status: 400,
          value: raw,
          error: t(pageLocale(ctx), 'account.email.invalid'),
          locale: pageLocale(ctx),
        });
      try {
        await service.requestEmailChange({
          tenantId: me.session.tenant_id,
          userId: me.user.id,
          currentEmail: me.user.email,
          newEmail: parsed.data,
          ip: ctx.ip,
          authTime: me.session.auth_time,
          locale: pageLocale(ctx),
        });
      } catch (e) {
        const err = shown(ctx, e);
        const stale = err.error === 'step_up_required';
        return emailFormPage(ctx, {
          csrf: token,
          status: err.status,
          value: raw,
          error: err.message,
          stale,
          locale: pageLocale(ctx),
        });
      }
      emailCodePage(ctx, {
        email: parsed.data,
        csrf: token,
        notice: t(pageLocale(ctx), 'account.code.sent'),
        locale: pageLocale(ctx),
      });
    },
  );

  api.page(
    router,
    { method: 'post', path: '/account/email/confirm', parser: 'form', authenticate: signedIn },
    async (ctx) => {
      await deps.throttle.formPost(ctx.ip);
      const f = form(ctx);
      if (!f) return;
      const { me, b, token } = f;
      const parsed = emailSchema.safeParse(typeof b.email === 'string' ? b.email.slice(0, 300) : '');
      if (!parsed.success)
        return emailFormPage(ctx, {
          csrf: token,
          status: 400,
          error: t(pageLocale(ctx), 'account.email.invalid'),
          locale: pageLocale(ctx),
        });
      const code = typeof b.code === 'string' ? b.code.trim() : '';
      try {
        await service.confirmEmailChange({
          tenantId: me.session.tenant_id,
          userId: me.user.id,
          newEmail: parsed.data,
          code,
          ip: ctx.ip,
          actor: { type: 'user', id: me.user.id, requestId: ctx.state.requestId },
          locale: pageLocale(ctx),
        });
      } catch (e) {
        const err = shown(ctx, e);
        return emailCodePage(ctx, {
          email: parsed.data,
          csrf: token,
          status: err.status,
          error: err.message,
          locale: pageLocale(ctx),
        });
      }
      ctx.status = 303;
      ctx.redirect('/account?done=email#profile');
    },
  );

  return router;
}
