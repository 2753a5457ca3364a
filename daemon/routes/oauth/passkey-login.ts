/**
 * Signing in with a passkey from the login page GET /authorize shows (docs/passkeys.md,
 * "Pages"). The page's script calls two JSON endpoints, bound like the login forms to the
 * saved authorization request and its double-submit CSRF token (authorization.ts):
 *
 * - POST /login/passkey/options: a fresh single-use challenge and the options for
 *   navigator.credentials.get (discoverable credentials: the authenticator names the user);
 * - POST /login/passkey: the assertion. The passkey service verifies it, and in the sign-in
 *   service's transaction its use is recorded, the session created and the authorization
 *   request consumed (as /login/verify does with a code); the answer is `{redirect_url}`, the
 *   continuation of the authorization, where the script sends the browser. A credential the
 *   tenant removed (a live tombstone) answers 400
 *   `invalid_grant` with `webauthn_signal: {unknown_credential: true}`; one it never knew (under
 *   the shared RP ID, perhaps another tenant's) the same refusal without the signal.
 *
 * Both count against the posting IP's form budget, and the assertion against the IP's and the
 * tenant's check budgets, as a code check does. No known-device cookie is set: that cookie
 * relaxes the email-code budgets of one address, which a passkey sign-in never touches.
 */
import Router from '@koa/router';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../../../shared/services/auth/policy.js';
import {
  LoginPasskeyOptionsBody,
  LoginPasskeyResult,
  LoginPasskeyVerifyBody,
  PasskeyOptionsResult,
} from '../../../shared/schemas/passkey-pages.js';
import type { AppDeps, AppState } from '../../context.js';
import { setCookie } from '../../cookies.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';
import { authorizationFlow, requestMeta } from './authorization.js';

const errors = {
  400: {
    description:
      'invalid body, expired authorization request, or a refused assertion (invalid_grant, with ' +
      '`webauthn_signal.unknown_credential` for a credential the tenant removed, docs/passkeys.md)',
    schema: ErrorObject,
  },
  403: { description: 'CSRF token refused, or the application is not available', schema: ErrorObject },
  429: { description: 'the IP’s login form budget is spent', schema: ErrorObject },
};

export function passkeyLoginRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { secure, formContext, continuationUrl } = authorizationFlow(deps);
  const tags = ['login: passkeys'];

  api.add(
    router,
    {
      method: 'post',
      path: '/login/passkey/options',
      summary: 'Passkey sign-in options for the login page (a single-use challenge)',
      tags,
      security: 'none',
      body: LoginPasskeyOptionsBody,
      responses: { 200: { description: 'the request options', schema: PasskeyOptionsResult }, ...errors },
    },
    async (ctx) => {
      await deps.throttle.formPost(ctx.ip);
      const f = (await formContext(ctx, 'json'))!;
      const o = await deps.passkeys.authenticationOptions({
        tenantId: f.client.tenant_id,
        clientId: f.client.client_id,
        authRequestId: f.challenge,
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { challenge_id: o.challengeId, options: o.options, expires_in: o.expiresIn };
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/login/passkey',
      operationId: 'verifyLoginPasskey',
      summary: 'Sign in with a passkey assertion; answers the URL that continues the authorization',
      tags,
      security: 'none',
      body: LoginPasskeyVerifyBody,
      responses: { 200: { description: 'signed in', schema: LoginPasskeyResult }, ...errors },
    },
    async (ctx) => {
      await deps.throttle.formPost(ctx.ip);
      const f = (await formContext(ctx, 'json'))!;
      // Every assertion checked is a sign-in attempt: the IP's and the tenant's check budgets,
      // as a code check at /login/verify and the direct API's passkey verify spend them.
      await deps.throttle.verify({ tenantId: f.client.tenant_id, ip: ctx.ip });
      const body = ctx.state.guard.body;
      // The assertion's use, the session and the consumed request commit together (sign-in.ts;
      // PasskeyRefused is thrown before anything is written, and rendered as the error object).
      // One sign-in per authorization request: a second, parallel one rolls back whole.
      const created = await deps.signIn.session(
        {
          passkey: {
            tenantId: f.client.tenant_id,
            clientId: f.client.client_id,
            challengeId: body.challenge_id,
            response: body.credential as unknown as AuthenticationResponseJSON,
            // The challenge was made for this authorization request (its options call): an
            // assertion over another request's challenge is refused.
            authRequestId: f.challenge,
          },
        },
        {
          clientId: f.client.client_id,
          meta: requestMeta(ctx),
          authRequest: { tenantId: f.req.tenantId, id: f.challenge, via: 'page' },
        },
      );
      setCookie(ctx, SESSION_COOKIE, created.cookie, { maxAgeSeconds: SESSION_TTL_MS / 1000, secure });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { redirect_url: continuationUrl(f.challenge, created.session.id, f.req.params) };
    },
  );

  return router;
}
