/**
 * Signing in and getting tokens through the HTTP API, for tests that need a user's tokens.
 */
import type { SmtpSink } from './smtp-sink.js';
import { authorizeUrl, challengeFrom, codeFrom, CookieJar, csrfFrom, get, pkce, postJson, REDIRECT } from './oauth.js';

/** The scope of a first-party token for the user API: the data export and every consent. */
export const ACCOUNT_SCOPE = 'openid email account';

export interface ClientCreds {
  clientId: string;
  secret: string;
}

export function loginKit(baseUrl: () => string, sinkOf: () => SmtpSink) {
  const url = () => baseUrl();

  async function sendAndReadCode(clientId: string, email: string): Promise<string> {
    const sink = sinkOf();
    const earlier = new Set(sink.messages);
    const r = await postJson(`${url()}/api/v1/auth/direct/email-code/send`, { client_id: clientId, email });
    if (r.status !== 200) throw new Error(`send ${r.status}`);
    return codeFrom((await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000)).text);
  }

  /** Signs in through the JSON API; the jar holds the session cookie. */
  async function signIn(clientId: string, email: string): Promise<CookieJar> {
    const jar = new CookieJar();
    const code = await sendAndReadCode(clientId, email);
    const r = await postJson(
      `${url()}/api/v1/auth/direct/email-code/verify`,
      { client_id: clientId, email, code },
      jar,
    );
    if (r.status !== 200) throw new Error(`verify ${r.status} ${await r.text()}`);
    return jar;
  }

  const authParams = (clientId: string, challenge: string, extra: Record<string, string | undefined> = {}) => ({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: 's1',
    nonce: 'n1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

  async function codeFor(jar: CookieJar, clientId: string, scope?: string) {
    const p = pkce();
    const r = await get(
      authorizeUrl(url(), authParams(clientId, p.challenge, { prompt: 'none', ...(scope ? { scope } : {}) })),
      jar,
    );
    const loc = new URL(r.headers.get('location')!);
    return { code: loc.searchParams.get('code')!, verifier: p.verifier, loc };
  }

  const basic = (c: ClientCreds) => 'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64');

  async function redeem(code: string, verifier: string, client: ClientCreds, redirectUri = REDIRECT) {
    const res = await fetch(`${url()}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  async function refresh(token: string, client: ClientCreds) {
    const res = await fetch(`${url()}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  /**
   * Sign-in, code and tokens for `email` at a first-party client: access, ID and refresh token.
   * `scope` defaults to `openid email`; ACCOUNT_SCOPE adds `account`, which the user API needs
   * for the data export and the whole consent list.
   */
  async function tokensFor(client: ClientCreds, email: string, scope?: string) {
    const jar = await signIn(client.clientId, email);
    const { code, verifier } = await codeFor(jar, client.clientId, scope);
    const t = await redeem(code, verifier, client);
    if (t.status !== 200) throw new Error(`token ${t.status} ${JSON.stringify(t.body)}`);
    return { jar, ...t.body } as {
      jar: CookieJar;
      access_token: string;
      refresh_token: string;
      id_token: string;
      scope: string;
    };
  }

  /**
   * Sign-in at a third-party client, the consent page allowed, the code redeemed: its tokens,
   * and the consent page's HTML. `scope` defaults to `openid email`.
   */
  async function consentedTokens(client: ClientCreds, email: string, scope?: string) {
    const jar = await signIn(client.clientId, email);
    const p = pkce();
    const page = await get(authorizeUrl(url(), authParams(client.clientId, p.challenge, scope ? { scope } : {})), jar);
    const html = await page.text();
    const form = new URLSearchParams({
      challenge: challengeFrom(html),
      csrf: csrfFrom(html),
      decision: 'allow',
    });
    const res = await fetch(`${url()}/authorize/consent`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: form,
    });
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
    const t = await redeem(code, p.verifier, client);
    if (t.status !== 200) throw new Error(`token ${t.status} ${JSON.stringify(t.body)}`);
    return {
      ...(t.body as { access_token: string; refresh_token: string; scope: string }),
      consentPage: html,
    };
  }

  const userinfo = (at: string) => fetch(`${url()}/userinfo`, { headers: { authorization: `Bearer ${at}` } });

  return {
    sendAndReadCode,
    signIn,
    authParams,
    codeFor,
    redeem,
    refresh,
    tokensFor,
    consentedTokens,
    userinfo,
    basic,
  };
}
