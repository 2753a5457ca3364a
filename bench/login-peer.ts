/**
 * node-oidc-provider's own login flow as a bench target (bench/lib/login-driver.ts), for the
 * same-run comparison that `node dist/bench/login.js --peer` (`npm run bench:login:peer`) runs:
 * the authorization-code flow with PKCE against the peer process (bench/oidc-provider-peer.ts),
 * as a browser walks it, with a fresh cookie jar per login so every login is a new sign-in:
 *
 *   1. GET  /auth?…                      303 to its interaction (login prompt)
 *   2. GET  /interaction/:uid            the login form
 *   3. POST /interaction/:uid/login      account looked up; 303 back to /auth/:uid
 *   4. GET  /auth/:uid                   session made; 303 to the interaction (consent prompt)
 *   5. GET  /interaction/:uid            the consent form
 *   6. POST /interaction/:uid/confirm    Grant saved; 303 back to /auth/:uid
 *   7. GET  /auth/:uid                   303 to the client's redirect_uri with the code
 *   8. POST /token                       code + code_verifier for the ID and access tokens
 *
 * The peer keeps everything in its in-memory adapter: no database and no mail.
 *
 * With `fapi` (bench/login-fapi.ts) the peer is bench/oidc-provider-fapi-peer.ts and the flow is
 * FAPI 2.0's: step 0, `POST /request` (its PAR endpoint) with the request and a client assertion,
 * then step 1 with only `client_id` and the `request_uri`; step 8 with a client assertion and a
 * DPoP proof instead of client_secret_basic (bench/lib/fapi-client.ts).
 */
import { BenchHttpClient, type BenchResponse, redeemCode } from './lib/http-client.js';
import type { LoginTarget } from './lib/login-driver.js';
import { PEER_FAPI, PEER_REDIRECT, PEER_WEB, startPeer } from './lib/peer.js';
import {
  clientAssertion,
  dpopKey,
  dpopProof,
  pkce,
  push,
  redeemCodeWithDpop,
  type DpopKey,
  type FapiClientKey,
} from './lib/fapi-client.js';

export const PEER_STEPS = [
  'authorize',
  'login page',
  'login',
  'resume',
  'consent page',
  'consent',
  'callback',
  'token',
] as const;
export const PEER_FAPI_STEPS = ['par', ...PEER_STEPS] as const;

/** A browser's cookie jar for one login: names and values only (every path on one origin). */
class Jar {
  readonly #cookies = new Map<string, string>();
  take(res: BenchResponse): void {
    for (const c of (res.headers['set-cookie'] as string[] | undefined) ?? []) {
      const pair = c.split(';', 1)[0];
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      // An expired or emptied cookie is removed (RFC 6265 §5.3 step 11).
      if (!value || /expires=Thu, 01 Jan 1970/i.test(c)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  header(): Record<string, string> {
    return this.#cookies.size ? { cookie: [...this.#cookies].map(([n, v]) => `${n}=${v}`).join('; ') } : {};
  }
}

export type PeerLogin = LoginTarget & { url: string; stop(): Promise<void> };

export async function startPeerLogin(concurrency: number, opts: { fapi?: FapiClientKey } = {}): Promise<PeerLogin> {
  const fapi = opts.fapi;
  const peer = await startPeer(
    fapi
      ? {
          accounts: concurrency,
          script: 'oidc-provider-fapi-peer.js',
          env: { BENCH_FAPI_CLIENT_JWK: JSON.stringify(fapi.publicJwk) },
        }
      : { accounts: concurrency },
  );
  const origin = new URL(peer.url).origin;
  const issuer = peer.url;
  const http = new BenchHttpClient(origin, { maxSockets: concurrency * 2 });
  const basic = 'Basic ' + Buffer.from(`${PEER_WEB.id}:${PEER_WEB.secret}`).toString('base64');
  const clientId = fapi ? PEER_FAPI.id : PEER_WEB.id;
  /** One DPoP key per virtual user, as one per client instance. */
  const dpopKeys: DpopKey[] = [];

  /** A request through the jar; `expect` is the status the flow needs here. */
  async function step(jar: Jar, what: string, method: string, path: string, expect: number, form?: string) {
    const headers = {
      ...jar.header(),
      ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    };
    const res = await http.request(method, path, headers, form);
    if (res.status !== expect) throw new Error(`${what} ${res.status}`);
    jar.take(res);
    return res;
  }
  /** The path of a same-origin redirect. */
  const next = (res: BenchResponse) => {
    const u = new URL(String(res.headers.location), origin);
    if (u.origin !== origin) throw new Error(`redirect to ${u.origin}`);
    return u.pathname + u.search;
  };
  const action = (html: string) => /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';

  async function login(vu: number): Promise<number[]> {
    const jar = new Jar();
    const { verifier, challenge } = pkce();
    const t: number[] = [performance.now()];
    const mark = () => t.push(performance.now());
    const params = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: PEER_REDIRECT,
      scope: 'openid email',
      state: 's',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    let q = new URLSearchParams(params);
    if (fapi) {
      const requestUri = await push(http, '/request', await clientAssertion(fapi, clientId, issuer), params);
      q = new URLSearchParams({ client_id: clientId, request_uri: requestUri });
      mark();
    }
    const auth = await step(jar, 'authorize', 'GET', `/auth?${q}`, 303);
    mark();
    const loginPage = await step(jar, 'login page', 'GET', next(auth), 200);
    mark();
    const loggedIn = await step(jar, 'login', 'POST', action(loginPage.body), 303, `login=bench${vu}`);
    mark();
    const resumed = await step(jar, 'resume', 'GET', next(loggedIn), 303);
    mark();
    const consentPage = await step(jar, 'consent page', 'GET', next(resumed), 200);
    mark();
    const consented = await step(jar, 'consent', 'POST', action(consentPage.body), 303, '');
    mark();
    const callback = await step(jar, 'callback', 'GET', next(consented), 303);
    const location = new URL(String(callback.headers.location));
    const code = location.searchParams.get('code');
    if (location.origin + location.pathname !== PEER_REDIRECT || !code) throw new Error('callback without code');
    mark();
    const form = { code, redirect_uri: PEER_REDIRECT, code_verifier: verifier };
    if (fapi) {
      const key = (dpopKeys[vu] ??= await dpopKey());
      await redeemCodeWithDpop(http, {
        path: '/token',
        assertion: await clientAssertion(fapi, clientId, issuer),
        proof: await dpopProof(key, 'POST', `${issuer}/token`),
        form,
      });
    } else await redeemCode(http, basic, form);
    mark();
    return t;
  }

  return {
    name: fapi ? 'node-oidc-provider (FAPI 2.0)' : 'node-oidc-provider',
    pid: peer.proc.pid!,
    workers: 1,
    steps: fapi ? PEER_FAPI_STEPS : PEER_STEPS,
    requestsPerLogin: fapi ? 9 : 8,
    login,
    url: peer.url,
    async stop() {
      await http.close();
      await peer.stop();
    },
  };
}
