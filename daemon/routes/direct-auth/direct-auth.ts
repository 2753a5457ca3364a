/**
 * The direct login API (`/api/v1/auth/direct/...`) for first-party apps that render their own
 * login UI: send an email code, verify it, and redeem a direct-auth artifact into a managed
 * browser session.
 *
 * Which step issues what (docs/oauth.md):
 * - verify without `code_challenge` creates the browser session at once (cookie) — the page flow.
 * - verify with a PKCE `code_challenge` issues a short-lived, single-use direct-auth artifact
 *   instead, bound to client_id, channel, provider_id and the challenge; the app then redeems
 *   it at POST /api/v1/auth/direct/session with the `code_verifier`.
 *
 * A code belongs to the login transaction that asked for it (docs/security.md): the
 * `authorization_challenge_id` when given; else the PKCE `code_challenge` given at send (and
 * repeated at verify); else the client's shared unbound transaction. A verify looks in the
 * transaction it names, then in the unbound one. Guesses and sends in one transaction never
 * touch a code bound to another.
 */
import { negotiateLocale } from '../../../shared/i18n/index.js';
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import { ApiError, InvalidClient, InvalidGrant, InvalidRequest } from '../../../shared/errors.js';
import { email } from '../../../shared/schemas/common.js';
import { EMAIL_CODE_PROVIDER, KNOWN_DEVICE_TTL_S } from '../../../shared/services/auth/codes.js';
import type { CreatedSession } from '../../../shared/services/auth/sessions.js';
import { PasskeyRefused } from '../../../shared/services/auth/passkeys.js';
import { PKCE_VALUE, verifyS256 } from '../../../shared/services/auth/pkce.js';
import { KNOWN_DEVICE_COOKIE, SESSION_COOKIE, SESSION_TTL_MS } from '../../../shared/services/auth/policy.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie, setCookie } from '../../cookies.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';
import { authorizationFlow, requestMeta, retryAfter } from '../oauth/authorization.js';

const SendBody = z.strictObject({
  client_id: z.string().min(1).max(128),
  email,
  authorization_challenge_id: z.string().min(1).max(64).optional(),
  /** Binds the code to this PKCE challenge when there is no authorization_challenge_id (docs/security.md). */
  code_challenge: z.string().regex(PKCE_VALUE, 'must be a PKCE S256 challenge (RFC 7636 §4.2)').optional(),
});

const VerifyBody = z.strictObject({
  client_id: z.string().min(1).max(128),
  email,
  code: z
    .string()
    .trim()
    .regex(/^\d{6}$/, 'must be the six-digit code'),
  authorization_challenge_id: z.string().min(1).max(64).optional(),
  code_challenge: z.string().regex(PKCE_VALUE, 'must be a PKCE S256 challenge (RFC 7636 §4.2)').optional(),
  code_challenge_method: z.literal('S256').optional(),
  channel: z.literal('browser').optional(),
  provider_id: z.literal(EMAIL_CODE_PROVIDER).optional(),
});

const SessionBody = z.strictObject({
  direct_auth_artifact: z.string().min(1).max(256),
  client_id: z.string().min(1).max(128),
  code_verifier: z.string().min(1).max(256),
  channel: z.literal('browser'),
  provider_id: z.string().min(1).max(64).optional(),
  authorization_challenge_id: z.string().min(1).max(64).optional(),
  defer_authorization_continuation: z.boolean().optional(),
});

export const DirectSessionResult = z.object({
  ok: z.boolean(),
  expires_in: z.number().int(),
  session: z.looseObject({
    userId: z.string(),
    createdAt: z.number().int(),
    expiresAt: z.number().int(),
    authTime: z.number().int(),
    acr: z.string(),
    amr: z.array(z.string()),
  }),
  user: z.looseObject({ id: z.string(), email: z.email(), name: z.string() }),
  authorization: z.looseObject({}).optional(),
  redirect_url: z.url().optional(),
});

type Ctx = ParameterizedContext<AppState>;

/** The checks every direct-auth endpoint starts with (passkeys.ts shares them). */
export function directAuthChecks(deps: AppDeps) {
  /** The active client of an active tenant, or 401 invalid_client / 403 access_denied. */
  const activeClient = async (clientId: string) => {
    const found = await deps.directory.resolveClient(clientId);
    if (!found || found.client.status !== 'active') throw new InvalidClient('Unknown or disabled client.');
    if (found.tenantState !== 'active')
      throw new ApiError(403, 'access_denied', 'This application is not available at the moment.');
    return { ...found.client, allowSignup: found.allowSignup };
  };

  /** The authorization request a login continues, which must belong to the same client. */
  const challengeFor = async (id: string | undefined, clientId: string) => {
    if (!id) return undefined;
    const req = await deps.oauth.getAuthRequest(id);
    if (!req || req.consumed || req.params.client_id !== clientId)
      throw new InvalidGrant('authorization_challenge_id is unknown, expired, used, or belongs to another client.');
    return req;
  };
  return { activeClient, challengeFor };
}

export function directAuthRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const issuer = deps.config.issuer;
  const secure = issuer.startsWith('https:');
  const { continuationUrl } = authorizationFlow(deps);
  const tags = ['direct auth'];
  const { activeClient, challengeFor } = directAuthChecks(deps);

  /** The login transaction of a send (see the file header). */
  const sendBinding = (clientId: string, challengeId?: string, codeChallenge?: string): string =>
    challengeId ? `ar:${challengeId}` : codeChallenge ? `pkce:${clientId}:${codeChallenge}` : `client:${clientId}`;

  const sessionResult = (ctx: Ctx, created: CreatedSession, extra: Record<string, unknown>) => {
    setCookie(ctx, SESSION_COOKIE, created.cookie, { maxAgeSeconds: SESSION_TTL_MS / 1000, secure });
    const s = created.session;
    ctx.body = {
      ok: true,
      expires_in: Math.floor((s.expires_at - Date.now()) / 1000),
      session: {
        userId: s.user_id,
        createdAt: s.created_at,
        expiresAt: s.expires_at,
        authTime: s.auth_time,
        acr: s.acr,
        amr: s.amr,
      },
      user: { id: created.user.id, email: created.user.email, name: created.user.name },
      ...extra,
    };
  };

  const errors = {
    400: { description: 'invalid request or grant', schema: ErrorObject },
    401: { description: 'unknown client', schema: ErrorObject },
  };

  api.add(
    router,
    {
      method: 'post',
      path: '/api/v1/auth/direct/email-code/send',
      summary: 'Email a one-time sign-in code (same answer for unknown addresses)',
      tags,
      security: 'none',
      body: SendBody,
      responses: {
        200: { description: 'sent', schema: z.object({ ok: z.boolean(), expires_in: z.number().int() }) },
        ...errors,
        429: {
          description: 'slow_down: a code was sent moments ago, or a sending budget is spent (Retry-After)',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const b = ctx.state.guard.body;
      const client = await activeClient(b.client_id);
      await challengeFor(b.authorization_challenge_id, client.client_id);
      try {
        const r = await deps.codes.sendCode({
          tenantId: client.tenant_id,
          clientId: client.client_id,
          email: b.email,
          binding: sendBinding(client.client_id, b.authorization_challenge_id, b.code_challenge),
          knownDevice: readCookie(ctx, KNOWN_DEVICE_COOKIE),
          allowSignup: client.allowSignup,
          meta: requestMeta(ctx),
          // A first-party app's own screen: its Accept-Language chooses the mail's language.
          locale: negotiateLocale(undefined, ctx.get('accept-language')),
        });
        ctx.body = { ok: true, expires_in: r.expiresIn };
      } catch (e) {
        if (e instanceof ApiError && e.status === 429) ctx.set('Retry-After', retryAfter(e));
        throw e;
      }
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/v1/auth/direct/email-code/verify',
      summary:
        'Verify an email code: creates the browser session, or with code_challenge issues a direct-auth artifact',
      tags,
      security: 'none',
      body: VerifyBody,
      responses: {
        200: {
          description: 'Direct-session result (session cookie set), or { ok, direct_auth_artifact, expires_in }',
          schema: z.union([
            DirectSessionResult,
            z.object({ ok: z.boolean(), direct_auth_artifact: z.string(), expires_in: z.number().int() }),
          ]),
        },
        ...errors,
        403: { description: 'account disabled', schema: ErrorObject },
        429: {
          description: 'slow_down: the address is locked or a budget is spent (Retry-After)',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const b = ctx.state.guard.body;
      const client = await activeClient(b.client_id);
      const challenge = await challengeFor(b.authorization_challenge_id, client.client_id);
      if (b.code_challenge_method && !b.code_challenge)
        throw new InvalidRequest('code_challenge_method needs a code_challenge.');
      const verify = {
        tenantId: client.tenant_id,
        clientId: client.client_id,
        email: b.email,
        code: b.code,
        // The code of the transaction this verify names (its challenge, else its PKCE challenge),
        // else one of the client's unbound transaction (a send that named none): bound codes are
        // only ever found through their own binding.
        binding: [
          ...(b.authorization_challenge_id ? [sendBinding(client.client_id, b.authorization_challenge_id)] : []),
          ...(b.code_challenge ? [sendBinding(client.client_id, undefined, b.code_challenge)] : []),
          sendBinding(client.client_id),
        ],
        knownDevice: readCookie(ctx, KNOWN_DEVICE_COOKIE),
        allowSignup: client.allowSignup,
        meta: requestMeta(ctx),
      };
      // The browser that proved the address has its throttling budgets to itself from now on.
      const knownDevice = () =>
        setCookie(ctx, KNOWN_DEVICE_COOKIE, deps.codes.knownDeviceToken(client.tenant_id, b.email), {
          maxAgeSeconds: KNOWN_DEVICE_TTL_S,
          secure,
        });
      if (b.code_challenge) {
        // The consumed code and the artifact commit together (sign-in.ts).
        const { artifact, expiresIn } = await deps.signIn.artifact(
          { emailCode: verify },
          {
            clientId: client.client_id,
            channel: b.channel ?? 'browser',
            codeChallenge: b.code_challenge,
            authRequestId: challenge ? b.authorization_challenge_id! : null,
          },
        );
        knownDevice();
        ctx.body = { ok: true, direct_auth_artifact: artifact, expires_in: expiresIn };
        return;
      }
      // The consumed code, the session, their history rows and the consumed challenge commit
      // together, in one transaction (sign-in.ts).
      const created = await deps.signIn.session(
        { emailCode: verify },
        {
          clientId: client.client_id,
          meta: requestMeta(ctx),
          ...(challenge
            ? { authRequest: { tenantId: challenge.tenantId, id: b.authorization_challenge_id!, via: 'direct' } }
            : {}),
        },
      );
      knownDevice();
      sessionResult(
        ctx,
        created,
        challenge
          ? {
              authorization: { challengeId: b.authorization_challenge_id, status: 'continued' },
              redirect_url: continuationUrl(b.authorization_challenge_id!, created.session.id, challenge.params),
            }
          : {},
      );
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/v1/auth/direct/session',
      summary: 'Redeem a direct-auth artifact into a managed browser session (HttpOnly cookie)',
      tags,
      security: 'none',
      body: SessionBody,
      responses: {
        200: { description: 'Direct-session result', schema: DirectSessionResult },
        ...errors,
        400: {
          description:
            'invalid request or grant; webauthn_signal.unknown_credential when the passkey of a passkey sign-in ' +
            'was removed since (docs/passkeys.md)',
          schema: ErrorObject, // with webauthn_signal (the interface's Error object)
        },
        403: { description: 'tenant or account unavailable', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const b = ctx.state.guard.body;
      const client = await activeClient(b.client_id);
      const a = await deps.artifacts.findArtifact(b.direct_auth_artifact);
      // Every binding is checked, and every failure looks the same to the caller.
      const bound =
        a &&
        a.clientId === client.client_id &&
        a.tenantId === client.tenant_id &&
        a.channel === b.channel &&
        (b.provider_id === undefined || b.provider_id === a.providerId) &&
        (b.authorization_challenge_id ?? null) === (a.authRequestId ?? null) &&
        verifyS256(b.code_verifier, a.codeChallenge);
      if (!a || !bound)
        throw new InvalidGrant(
          'The direct-auth artifact is invalid, expired, already used, or not bound to this client, channel, ' +
            'provider or code_verifier.',
        );
      // A passkey sign-in's artifact is only as good as its passkey: one removed since (from the
      // account page, or by an administrator) is refused with the signal that lets the client
      // drop the credential (WebAuthn L3 §5.1.10 signalUnknownCredential; docs/passkeys.md),
      // but only while the removal's tombstone is live; a passkey gone without one (never this
      // tenant's to remove) is refused the same way without the signal.
      if (a.passkeyId !== null && !(await deps.passkeys.stillRegistered(a.tenantId, a.passkeyId)))
        throw new PasskeyRefused(
          'The passkey of this sign-in is no longer registered.',
          await deps.passkeys.removedRecently(a.tenantId, a.passkeyId),
        );
      const challenge = a.authRequestId ? await deps.oauth.getAuthRequest(a.authRequestId) : undefined;
      // The consumed artifact, the consumed challenge (when the login continues now) and the
      // session commit together (sign-in.ts); the artifact's user must still be active.
      const continueNow = challenge && !challenge.consumed && !b.defer_authorization_continuation;
      const created = await deps.signIn.session(
        { artifact: a },
        {
          clientId: client.client_id,
          meta: requestMeta(ctx),
          ...(continueNow ? { authRequest: { tenantId: a.tenantId, id: a.authRequestId!, via: 'direct' } } : {}),
        },
      );
      let extra: Record<string, unknown> = {};
      if (challenge) {
        extra = b.defer_authorization_continuation
          ? { authorization: { challengeId: a.authRequestId, status: 'deferred' } }
          : {
              authorization: { challengeId: a.authRequestId, status: 'continued' },
              redirect_url: continuationUrl(a.authRequestId!, created.session.id, challenge.params),
            };
      }
      sessionResult(ctx, created, extra);
    },
  );

  return router;
}
