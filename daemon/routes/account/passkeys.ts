/**
 * The account page's passkeys (docs/passkeys.md, "Pages"), authenticated by the session
 * cookie and the account page's CSRF token (an HMAC of the session id, daemon/csrf.ts):
 *
 * - POST /account/passkeys/options (JSON): registration options with a single-use challenge.
 *   Registering needs a fresh sign-in: a session whose auth_time is older than five minutes
 *   gets 403 `step_up_required`, and the page offers /account/reauth (reauth.ts).
 * - POST /account/passkeys (JSON): the attestation; the passkey is stored under its name (201).
 * - POST /account/passkeys/:id/rename and /delete: forms, answered with a redirect to the page.
 *
 * The JSON endpoints are called by the page's own script: a request that names another
 * Origin is refused, beside the CSRF token (which a cross-site page cannot read).
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import {
  AccountCsrfBody,
  AccountPasskeyCreateBody,
  AccountPasskeyRecord,
  PasskeyOptionsResult,
} from '../../../shared/schemas/passkey-pages.js';
import { publicPasskeyRecord, type PasskeyView } from '../../../shared/services/auth/passkeys.js';
import type { AppDeps, AppState } from '../../context.js';
import { refuseCrossOrigin } from '../../csrf.js';
import { accountForms } from './forms.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';
import { translator } from '../../../shared/i18n/index.js';
import { esc, renderPage, pageLocale } from '../../views/html.js';

type Ctx = ParameterizedContext<AppState>;

/** The answer page of a rename or remove that did not happen: its heading, what was wrong, the way back. */
function formPage(ctx: ParameterizedContext, status: number, heading: string, alert?: string): void {
  const locale = pageLocale(ctx);
  const tr = translator(locale);
  renderPage(ctx, {
    status,
    locale,
    title: tr(heading),
    body:
      `<h1>${esc(tr(heading))}</h1>` +
      (alert ? `<p role="alert">${esc(tr(alert))}</p>` : '') +
      `<p><a href="/account#passkeys">${esc(tr('account.back'))}</a></p>`,
  });
}

const PasskeyName = z.string().trim().min(1).max(64);

/** The account page's record of a passkey: its public data but the authenticator model (aaguid). */
export function passkeyRecord(p: PasskeyView): z.infer<typeof AccountPasskeyRecord> {
  const { aaguid: _aaguid, ...record } = publicPasskeyRecord(p);
  return record;
}

const errors = {
  400: { description: 'invalid body, or the attestation was refused (invalid_grant)', schema: ErrorObject },
  401: { description: 'no valid session cookie', schema: ErrorObject },
  403: {
    description:
      'CSRF token or Origin refused (forbidden), or the sign-in is older than five minutes (step_up_required)',
    schema: ErrorObject,
  },
};

export function accountPasskeyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { csrf, formOk, refused } = accountForms(deps);
  const issuerOrigin = new URL(deps.config.issuer).origin;
  const tags = ['account: passkeys'];
  const signedIn = sessionAuth(deps);
  const signedInPage = sessionAuth(deps, { page: true });

  /** The JSON endpoints: same origin (when the browser says) and the session's CSRF token. */
  const checkJson = (ctx: Ctx, token: string) => {
    refuseCrossOrigin(ctx.get('Origin'), issuerOrigin);
    if (!csrf.verify(ctx.state.session!.session.id, token))
      throw new ApiError(403, 'forbidden', 'body.csrf: not this session’s token; reload the account page.');
  };

  api.add(
    router,
    {
      method: 'post',
      path: '/account/passkeys/options',
      operationId: 'createAccountPasskeyOptions',
      summary: 'Options to register a passkey (needs a sign-in from the last five minutes)',
      tags,
      security: 'cookie',
      authenticate: signedIn,
      body: AccountCsrfBody,
      responses: { 200: { description: 'the creation options', schema: PasskeyOptionsResult }, ...errors },
    },
    async (ctx) => {
      checkJson(ctx, ctx.state.guard.body.csrf);
      const { session, user } = ctx.state.session!;
      const o = await deps.passkeys.registrationOptions({ user, sessionId: session.id, authTime: session.auth_time });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { challenge_id: o.challengeId, options: o.options, expires_in: o.expiresIn };
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/account/passkeys',
      operationId: 'registerAccountPasskey',
      summary: 'Register a passkey from its attestation',
      tags,
      security: 'cookie',
      authenticate: signedIn,
      body: AccountPasskeyCreateBody,
      responses: { 201: { description: 'registered', schema: AccountPasskeyRecord }, ...errors },
    },
    async (ctx) => {
      const body = ctx.state.guard.body;
      checkJson(ctx, body.csrf);
      const { session, user } = ctx.state.session!;
      const view = await deps.passkeys.verifyRegistration({
        user,
        sessionId: session.id,
        authTime: session.auth_time,
        challengeId: body.challenge_id,
        name: body.name,
        response: body.credential,
      });
      ctx.status = 201;
      ctx.body = passkeyRecord(view);
    },
  );

  api.page(
    router,
    { method: 'post', path: '/account/passkeys/:id/rename', parser: 'form', authenticate: signedInPage },
    async (ctx) => {
      const me = ctx.state.session!;
      if (!formOk(ctx)) return refused(ctx);
      const name = PasskeyName.safeParse((ctx.request.body as Record<string, unknown> | undefined)?.name);
      if (!name.success) return formPage(ctx, 400, 'account.name.invalid', 'account.passkeys.nameRule');
      if (!(await deps.passkeys.rename(me.session.tenant_id, me.user.id, ctx.params.id, name.data)))
        return formPage(ctx, 404, 'account.passkeys.notFound');
      ctx.status = 303;
      ctx.redirect('/account?done=passkey_renamed#passkeys');
    },
  );

  api.page(
    router,
    { method: 'post', path: '/account/passkeys/:id/delete', parser: 'form', authenticate: signedInPage },
    async (ctx) => {
      const me = ctx.state.session!;
      if (!formOk(ctx)) return refused(ctx);
      if (!(await deps.passkeys.remove(me.session.tenant_id, me.user.id, ctx.params.id)))
        return formPage(ctx, 404, 'account.passkeys.notFound');
      ctx.status = 303;
      ctx.redirect('/account?done=passkey_removed#passkeys');
    },
  );

  return router;
}
