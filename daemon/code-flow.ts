/**
 * The daemon signing a browser in as its own first-party client: the authorization code flow
 * with PKCE (RFC 7636) against the issuer's own /authorize, shared by the account page
 * (routes/account/sign-in.ts) and the operator console (routes/console/sign-in.ts), which differ
 * only in their client, their cookie and the pages they answer.
 *
 * - startCodeFlow: a fresh `state` and code verifier in a short-lived HttpOnly cookie of this
 *   browser (scoped to the callback's path), and the /authorize query that goes with them.
 * - endCodeFlow: the cookie read and cleared (one use).
 * - callbackCode: the callback's `state` must equal the cookie's (constant-time; RFC 6749
 *   §10.12, the CSRF defence of a redirect URI), and a code must have come.
 * - redeemCode: the code is redeemed with the verifier, and the code's session must be this
 *   browser's own session cookie, which the sign-in just set: another browser's code (a leaked
 *   one) does not sign this one in.
 */
import type { ParameterizedContext } from 'koa';
import { randomToken, sameText } from '../shared/crypto.js';
import type { Client } from '../shared/db/entities.js';
import { OAuthError } from '../shared/errors.js';
import { pkceChallenge } from '../shared/services/auth/account-console.js';
import { SESSION_COOKIE } from '../shared/services/auth/policy.js';
import type { AppDeps } from './context.js';
import { clearCookie, readCookie, setCookie } from './cookies.js';

/** As long as a sign-in may take (the authorization request lives as long). */
const FLOW_TTL_SECONDS = 15 * 60;

/** One flow's cookie: its name, the callback path it is scoped to, and whether it is Secure. */
export interface CodeFlow {
  cookie: string;
  callback: string;
  secure: boolean;
}

/**
 * Sets the flow's cookie, `<state>.<verifier>[.<tail>…]`, and answers the /authorize query for
 * `client` (its first redirect URI, scope openid, S256).
 */
export function startCodeFlow(
  ctx: ParameterizedContext,
  flow: CodeFlow,
  client: Pick<Client, 'client_id' | 'redirect_uris'>,
  tail: string[] = [],
): URLSearchParams {
  const state = randomToken(24);
  const verifier = randomToken(48);
  setCookie(ctx, flow.cookie, [state, verifier, ...tail].join('.'), {
    maxAgeSeconds: FLOW_TTL_SECONDS,
    secure: flow.secure,
    path: flow.callback,
  });
  return new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0],
    scope: 'openid',
    state,
    code_challenge: pkceChallenge(verifier),
    code_challenge_method: 'S256',
  });
}

/** The flow's cookie, read and cleared: `[state, verifier, ...tail]`. */
export function endCodeFlow(ctx: ParameterizedContext, flow: CodeFlow): string[] {
  const parts = (readCookie(ctx, flow.cookie) ?? '').split('.');
  clearCookie(ctx, flow.cookie, flow.secure, flow.callback);
  return parts;
}

/** The callback's code when its `state` is the cookie's, else undefined. */
export function callbackCode(ctx: ParameterizedContext, state: string, verifier: string): string | undefined {
  const q = ctx.query;
  if (!state || !verifier || typeof q.state !== 'string' || !sameText(q.state, state)) return undefined;
  return typeof q.code === 'string' && q.code ? q.code : undefined;
}

/** True when the code is redeemed and its session is this browser's; a refused code is false. */
export async function redeemCode(
  deps: Pick<AppDeps, 'oauth' | 'sessions'>,
  ctx: ParameterizedContext,
  client: Client,
  code: string,
  verifier: string,
): Promise<boolean> {
  let sessionId: string;
  try {
    const { code: row } = await deps.oauth.exchangeCode(client, {
      code,
      redirectUri: client.redirect_uris[0],
      codeVerifier: verifier,
    });
    sessionId = row.session_id;
  } catch (e) {
    if (e instanceof OAuthError) return false;
    throw e;
  }
  const mine = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
  return !!mine && mine.session.id === sessionId;
}
