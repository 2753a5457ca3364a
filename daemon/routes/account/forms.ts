/**
 * What every account-page form shares (page.ts, passkeys.ts, reauth.ts): the CSRF token bound
 * to the session (an HMAC of its id, daemon/csrf.ts), its check on a posted form, and the page
 * a form with a bad token gets.
 */
import type { ParameterizedContext } from 'koa';
import type { AppDeps, AppState } from '../../context.js';
import { sessionCsrf } from '../../csrf.js';
import { renderPage } from '../../views/html.js';

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
    /** The answer to a form whose token did not verify; `hint` (trusted HTML) says what to do. */
    refused: (ctx: Ctx, hint = 'Reload the account page and try again.'): void =>
      renderPage(ctx, {
        status: 403,
        title: 'Refused',
        body: `<h1>Request refused</h1><p role="alert">The form could not be verified. ${hint}</p>`,
      }),
  };
}
