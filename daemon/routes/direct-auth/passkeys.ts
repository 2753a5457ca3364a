/**
 * The direct login API's passkey steps (`/api/v1/auth/direct/passkey/...`, docs/passkeys.md):
 * a first-party app asks for request options, has the browser answer them
 * (navigator.credentials.get, discoverable credentials), and trades the assertion for a
 * direct-auth artifact bound to its PKCE challenge, which it redeems at
 * POST /api/v1/auth/direct/session like the email code's.
 *
 * An assertion for a credential this tenant removed (its tombstone is live) is refused with
 * `webauthn_signal: {unknown_credential: true}`, so the app can tell the browser to forget it
 * (WebAuthn L3 §5.1.10, PublicKeyCredential.signalUnknownCredential). One the tenant never knew
 * is refused without it: under the shared RP ID it may be another tenant's working passkey.
 */
import Router from '@koa/router';
import {
  PasskeyArtifactResult,
  PasskeyOptionsBody,
  PasskeyOptionsResult,
  PasskeyVerifyBody,
} from '../../../shared/schemas/passkeys.js';
import type { AppDeps, AppState } from '../../context.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';
import { requestMeta } from '../oauth/authorization.js';
import { directAuthChecks } from './direct-auth.js';

export function directPasskeyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { activeClient, challengeFor } = directAuthChecks(deps);
  const tags = ['direct auth'];
  const errors = {
    401: { description: 'unknown client', schema: ErrorObject },
    403: { description: 'application or account unavailable', schema: ErrorObject },
    429: {
      description: 'slow_down: a sign-in budget of the network or tenant is spent (Retry-After)',
      schema: ErrorObject,
    },
  };

  api.add(
    router,
    {
      method: 'post',
      path: '/api/v1/auth/direct/passkey/options',
      summary: 'Request options for a passkey sign-in (discoverable credentials; single-use challenge)',
      tags,
      security: 'none',
      body: PasskeyOptionsBody,
      responses: {
        200: { description: 'the options for navigator.credentials.get', schema: PasskeyOptionsResult },
        400: { description: 'invalid request, or an unknown authorization_challenge_id', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      const b = ctx.state.guard.body;
      const client = await activeClient(b.client_id);
      await challengeFor(b.authorization_challenge_id, client.client_id);
      // Each options call stores a challenge: it spends the network's sign-in form budget (a
      // spent one is a 429 slow_down with Retry-After, as at the email-code endpoints).
      await deps.throttle.formPost(ctx.ip);
      const r = await deps.passkeys.authenticationOptions({
        tenantId: client.tenant_id,
        clientId: client.client_id,
        authRequestId: b.authorization_challenge_id ?? null,
      });
      ctx.body = { ok: true, challenge_id: r.challengeId, public_key: r.options, expires_in: r.expiresIn };
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/v1/auth/direct/passkey/verify',
      summary: 'Verify a passkey assertion and issue a direct-auth artifact bound to the PKCE challenge',
      tags,
      security: 'none',
      body: PasskeyVerifyBody,
      responses: {
        200: { description: '{ ok, direct_auth_artifact, expires_in }', schema: PasskeyArtifactResult },
        400: {
          description:
            'invalid request, or a refused assertion (invalid_grant); webauthn_signal.unknown_credential when ' +
            'the credential was removed from this tenant (docs/passkeys.md, tombstones)',
          schema: ErrorObject, // with webauthn_signal (the interface's Error object)
        },
        ...errors,
      },
    },
    async (ctx) => {
      const b = ctx.state.guard.body;
      const client = await activeClient(b.client_id);
      const challenge = await challengeFor(b.authorization_challenge_id, client.client_id);
      // Every assertion, right or wrong, spends the network's and the tenant's check budgets.
      await deps.throttle.verify({ tenantId: client.tenant_id, ip: ctx.ip });
      // The assertion's use and the artifact commit together (sign-in.ts).
      const { artifact, expiresIn } = await deps.signIn.artifact(
        {
          passkey: {
            tenantId: client.tenant_id,
            clientId: client.client_id,
            challengeId: b.challenge_id,
            response: b.credential,
            // The challenge must have been asked for the same authorization request (or none).
            authRequestId: b.authorization_challenge_id ?? null,
          },
        },
        {
          clientId: client.client_id,
          channel: b.channel ?? 'browser',
          codeChallenge: b.code_challenge,
          authRequestId: challenge ? b.authorization_challenge_id! : null,
          meta: requestMeta(ctx),
        },
      );
      ctx.body = { ok: true, direct_auth_artifact: artifact, expires_in: expiresIn };
    },
  );

  return router;
}
