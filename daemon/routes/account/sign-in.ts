/**
 * The account console signs a signed-out user in itself (docs/account.md, "Signing in"): it is
 * a first-party OAuth client of the user's tenant (shared/services/auth/account-console.ts) and
 * runs the authorization code flow with PKCE (RFC 7636) against the tenant's own /authorize.
 *
 * - The signed-out /account page offers "Sign in" for the tenant named by `?tenant=` (the
 *   link an app gives its users), or the only tenant of a single-tenant deployment.
 * - GET /account/sign-in?tenant=…: a fresh `state` and code verifier in a short-lived HttpOnly
 *   cookie of this browser, then 303 to /authorize (a same-origin URL built here, never one
 *   taken from the request). `login_hint` and `ui_locales`, when given (an invitation's link),
 *   are passed on as the request's hints: the login page opens with the address filled in.
 * - GET /account/callback: the `state` must equal the cookie's (constant-time; RFC 6749
 *   §10.12, the CSRF defence of a redirect URI), the code is redeemed with the verifier, and
 *   the code's session must be this browser's own session cookie, which the sign-in just set:
 *   that session is the account page's. Then 303 to /account.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { translator } from '../../../shared/i18n/index.js';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import { callbackCode, endCodeFlow, redeemCode, startCodeFlow, type CodeFlow } from '../../code-flow.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie } from '../../cookies.js';
import type { ApiRegistry } from '../../openapi.js';
import { esc, renderPage, pageLocale } from '../../views/html.js';

const TENANT_ID = /^[A-Za-z0-9_-]{1,40}$/;
/** A hint longer than /authorize keeps (320 characters of login_hint) is dropped, not cut. */
const HINT_MAX = 320;

/** The tenant a signed-out account page offers to sign in to, if it can tell. */
async function tenantHint(deps: AppDeps, ctx: ParameterizedContext): Promise<string | undefined> {
  const asked = ctx.query.tenant;
  if (typeof asked === 'string') return TENANT_ID.test(asked) ? asked : undefined;
  // A deployment of one tenant needs no link: it is that one. (Two or more: the page cannot
  // guess, and must not list them.)
  const tenants = await deps.directory.listTenants(2);
  return tenants.length === 1 ? tenants[0].id : undefined;
}

/**
 * The signed-out account page (a 401): "Sign in" when the tenant is known, else where to go.
 * `known: false`: the tenant asked for is not one (no button that would lead back here).
 */
export async function signedOutPage(deps: AppDeps, ctx: ParameterizedContext, known = true): Promise<void> {
  const locale = pageLocale(ctx);
  const tr = translator(locale);
  const tenant = known ? await tenantHint(deps, ctx) : undefined;
  const action = tenant
    ? `<a class="button" href="/account/sign-in?tenant=${encodeURIComponent(tenant)}">${esc(
        tr('account.signedOut.button'),
      )}</a>`
    : `<p>${esc(tr('account.signedOut.noTenant'))}</p>`;
  renderPage(ctx, {
    status: 401,
    locale,
    title: tr('account.signedOut.title'),
    body: `<h1>${esc(tr('account.signedOut.heading'))}</h1>
<p>${esc(tr('account.signedOut.text'))}</p>
${action}`,
  });
}

export function accountConsoleRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const issuer = deps.config.issuer;
  /** The browser's half of one console sign-in: `<state>.<verifier>.<tenant id>`. */
  const flow: CodeFlow = {
    cookie: 'account_signin',
    callback: '/account/callback',
    secure: issuer.startsWith('https:'),
  };

  /** The sign-in did not complete: say so, and offer it again (400). */
  const failed = (ctx: ParameterizedContext, tenant?: string) => {
    const locale = pageLocale(ctx);
    const tr = translator(locale);
    const retry = tenant
      ? `<a class="button" href="/account/sign-in?tenant=${encodeURIComponent(tenant)}">${esc(
          tr('account.signedOut.button'),
        )}</a>`
      : '';
    renderPage(ctx, {
      status: 400,
      locale,
      title: tr('account.signedOut.button'),
      body: `<h1>${esc(tr('account.signedOut.button'))}</h1>
<p role="alert">${esc(tr('account.signIn.failed'))}</p>
${retry}`,
    });
  };

  api.page(router, { method: 'get', path: '/account/sign-in' }, async (ctx) => {
    const tenant = typeof ctx.query.tenant === 'string' && TENANT_ID.test(ctx.query.tenant) ? ctx.query.tenant : '';
    if (await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE))) {
      ctx.status = 303; // RFC 9110 §15.4.4: already signed in
      return ctx.redirect('/account');
    }
    const client = tenant ? await deps.account.consoleClient(tenant, issuer) : undefined;
    if (!client) return signedOutPage(deps, ctx, false);
    const q = startCodeFlow(ctx, flow, client, [tenant]);
    // An invitation's link (shared/services/invitations.ts) names the address and the language:
    // passed on as OIDC Core §3.1.2.1 hints, which /authorize bounds and treats as preferences.
    for (const hint of ['login_hint', 'ui_locales'] as const) {
      const v = ctx.query[hint];
      if (typeof v === 'string' && v && v.length <= HINT_MAX) q.set(hint, v);
    }
    ctx.status = 303;
    // The issuer's own /authorize: same origin, built from configuration only.
    ctx.redirect(`${issuer}/authorize?${q}`);
  });

  api.page(router, { method: 'get', path: flow.callback }, async (ctx) => {
    const [state = '', verifier = '', tenant = ''] = endCodeFlow(ctx, flow);
    const known = TENANT_ID.test(tenant) ? tenant : undefined;
    const code = callbackCode(ctx, state, verifier);
    if (!code || !known) return failed(ctx, known);
    const client = await deps.account.consoleClient(known, issuer);
    if (!client) return failed(ctx);
    // The code was issued to the session this browser now holds (code-flow.ts).
    if (!(await redeemCode(deps, ctx, client, code, verifier))) return failed(ctx, known);
    ctx.status = 303;
    ctx.redirect('/account');
  });

  return router;
}
