/**
 * What every account-page form shares (page.ts, passkeys.ts, reauth.ts): the CSRF token bound
 * to the session (an HMAC of its id, daemon/csrf.ts), its check on a posted form, and the page
 * a form with a bad token gets.
 */
import type { ParameterizedContext } from 'koa';
import type { AppDeps, AppState } from '../../context.js';
import { sessionCsrf } from '../../csrf.js';
import { translator } from '../../../shared/i18n/index.js';
import { esc, renderPage, pageLocale } from '../../views/html.js';
import { fill } from '../../views/page-i18n.js';

type Ctx = ParameterizedContext<AppState>;

/** The purpose the account page's CSRF token is derived for. */
export const ACCOUNT_CSRF_PURPOSE = 'account-csrf';

export function accountForms(deps: AppDeps) {
  const csrf = sessionCsrf(deps.config.secretKey, ACCOUNT_CSRF_PURPOSE);
  return {
    csrf,
    /** Whether the posted form's `csrf` field is the signed-in session's token. */
    formOk: (ctx: Ctx): boolean =>
      csrf.verify(ctx.state.session!.session.id, (ctx.request.body as Record<string, unknown> | undefined)?.csrf),
    /**
     * The answer to a form whose token did not verify: reload the page, or (`back`) go back to
     * the account page, and try again.
     */
    refused: (ctx: Ctx, back = false): void => {
      const locale = pageLocale(ctx);
      const tr = translator(locale);
      const hint = back
        ? fill(tr, 'account.refused.goBack', {
            link: `<a href="/account">${esc(tr('account.refused.yourAccount'))}</a>`,
          })
        : esc(tr('account.refused.reload'));
      renderPage(ctx, {
        status: 403,
        locale,
        title: tr('account.refused.title'),
        body:
          `<h1>${esc(tr('account.refused.heading'))}</h1>` +
          `<p role="alert">${esc(tr('account.refused.text'))} ${hint}</p>`,
      });
    },
  };
}
