/**
 * A real upstream OpenID Provider for identity-brokering tests: node-oidc-provider (v9) on
 * loopback over HTTPS (a throwaway self-signed certificate, as https-issuer.ts makes), with
 * - one confidential client for us (client_secret_basic, authorization_code + refresh_token,
 *   PKCE required), redirecting to the daemon's /login/upstream/callback;
 * - test accounts (`accounts`), and an interaction page of its own: the login step shows a
 *   form with a "Sign in" button for the account in `loginAs` (or completes by itself with
 *   `autoLogin`), the consent step grants what was asked;
 * - refresh tokens for `offline_access`, a configurable access-token lifetime, rotation of
 *   refresh tokens on or off (`rotateRefreshToken`);
 * - an in-memory store the test can reach: `revokeRefreshTokens()` makes the next refresh a
 *   genuine `invalid_grant`;
 * - counters per path (`hits`) and a switch to answer the token endpoint with an error status
 *   (`failTokenRequests`), for back-off tests.
 *
 * `fetch` is a fetch that trusts the certificate (undici), and `follow` walks a browser-like
 * redirect chain through the provider with a cookie jar, stopping at the first URL outside it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import { makeCert, type TestCert } from './https-issuer.js';
import { CookieJar } from './oauth.js';

export interface UpstreamAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface UpstreamOpOptions {
  /** The redirect URI registered for our client, usually `${daemon}/login/upstream/callback`. */
  redirectUri: string | string[];
  clientId?: string;
  clientSecret?: string;
  /** Accounts by `sub`. Default: one, `alice`, with a verified address. */
  accounts?: Record<string, UpstreamAccount>;
  /** Access token lifetime, seconds (default 3600). */
  accessTokenTtl?: number;
  /** Whether a refresh returns a new refresh token (default true: always rotate). */
  rotateRefreshToken?: boolean;
  /** Complete the login step without showing the form (default true). */
  autoLogin?: boolean;
  cert?: TestCert;
}

export interface UpstreamOp {
  /** https://127.0.0.1:<port> */
  issuer: string;
  clientId: string;
  clientSecret: string;
  cert: TestCert;
  accounts: Record<string, UpstreamAccount>;
  /** The account the next login step signs in as. */
  loginAs: string;
  autoLogin: boolean;
  /** Requests by path (e.g. hits['/token']). */
  hits: Record<string, number>;
  /**
   * The grant_type of every token request, in order: `refresh_token`, `authorization_code`,
   * with `:error` when the provider refused it (e.g. invalid_grant), `(refused)` when
   * `failTokenRequests` answered it.
   */
  tokenGrants: string[];
  /** When set, the token endpoint answers this status (and a JSON error) while `count` > 0. */
  failTokenRequests?: { status: number; count: number; retryAfter?: number };
  /** Forgets every refresh token: the next refresh is answered invalid_grant. */
  revokeRefreshTokens(): number;
  /** Fetch trusting this provider's certificate. */
  fetch(url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Response>;
  /**
   * Follows redirects from `url` while they stay on this provider (GET, cookies in `jar`),
   * submitting its login form when shown; returns the first location outside it.
   */
  follow(url: string, jar?: CookieJar): Promise<URL>;
  close(): Promise<void>;
}

interface StoredEntry {
  payload: Record<string, unknown>;
  expiresAt: number;
}

/** node-oidc-provider's adapter contract, kept in a Map this helper can see. */
function memoryStore() {
  const data = new Map<string, StoredEntry>();
  const live = (key: string) => {
    const e = data.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= Date.now()) {
      data.delete(key);
      return undefined;
    }
    return e.payload;
  };
  class Adapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`;
    }
    upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
      data.set(this.key(id), { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
      return Promise.resolve();
    }
    find(id: string) {
      return Promise.resolve(live(this.key(id)));
    }
    findByUid(uid: string) {
      for (const [k] of data) {
        const p = k.startsWith(`${this.model}:`) ? live(k) : undefined;
        if (p?.uid === uid) return Promise.resolve(p);
      }
      return Promise.resolve(undefined);
    }
    findByUserCode(code: string) {
      for (const [k] of data) {
        const p = k.startsWith(`${this.model}:`) ? live(k) : undefined;
        if (p?.userCode === code) return Promise.resolve(p);
      }
      return Promise.resolve(undefined);
    }
    consume(id: string) {
      const p = live(this.key(id));
      if (p) p.consumed = Math.floor(Date.now() / 1000);
      return Promise.resolve();
    }
    destroy(id: string) {
      data.delete(this.key(id));
      return Promise.resolve();
    }
    revokeByGrantId(grantId: string) {
      for (const [k, e] of data) if (e.payload.grantId === grantId) data.delete(k);
      return Promise.resolve();
    }
  }
  const dropModel = (model: string) => {
    let n = 0;
    for (const k of [...data.keys()])
      if (k.startsWith(`${model}:`)) {
        data.delete(k);
        n++;
      }
    return n;
  };
  return { Adapter, dropModel };
}

/** The surface of node-oidc-provider this helper uses (the package ships no types). */
interface OpSurface {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  on(event: string, listener: (...args: never[]) => void): void;
  interactionDetails(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId: string };
    grantId?: string;
  }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>): Promise<void>;
  Grant: new (p: { accountId: string; clientId: string }) => {
    addOIDCScope(s: string): void;
    addOIDCClaims(c: string[]): void;
    save(): Promise<string>;
  };
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startUpstreamOp(opts: UpstreamOpOptions): Promise<UpstreamOp> {
  const cert = opts.cert ?? makeCert();
  const clientId = opts.clientId ?? 'iam-broker';
  const clientSecret = opts.clientSecret ?? 'upstream-client-secret-0123456789abcdef';
  const accounts: Record<string, UpstreamAccount> = opts.accounts ?? {
    alice: { email: 'alice@upstream.example', email_verified: true, name: 'Alice Upstream' },
  };
  const store = memoryStore();
  const hits: Record<string, number> = {};
  const tokenGrants: string[] = [];

  // The port is needed for the issuer before the provider exists: listen first, then attach.
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, s) => s.end();
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const op: UpstreamOp = {
    issuer,
    clientId,
    clientSecret,
    cert,
    accounts,
    loginAs: Object.keys(accounts)[0],
    autoLogin: opts.autoLogin ?? true,
    hits,
    tokenGrants,
    revokeRefreshTokens: () => store.dropModel('RefreshToken'),
    fetch: undefined as never,
    follow: undefined as never,
    close: undefined as never,
  };

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingJwk = { ...(await exportJWK(privateKey)), kid: 'upstream-test', alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    adapter: store.Adapter,
    jwks: { keys: [signingJwk] },
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: Array.isArray(opts.redirectUri) ? opts.redirectUri : [opts.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    // eslint-disable-next-line @typescript-eslint/require-await
    findAccount: async (_ctx: unknown, sub: string) => {
      const a = accounts[sub];
      if (!a) return undefined;
      return {
        accountId: sub,
        // eslint-disable-next-line @typescript-eslint/require-await
        claims: async () => ({ sub, ...a }),
      };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    scopes: ['openid', 'offline_access', 'email', 'profile'],
    pkce: { required: () => true },
    ttl: {
      AccessToken: opts.accessTokenTtl ?? 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 14 * 24 * 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 14 * 24 * 3600,
    },
    rotateRefreshToken: () => opts.rotateRefreshToken ?? true,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['upstream-op-test-cookie-key-0123456789'] },
  }) as unknown as OpSurface;
  const opCallback = provider.callback();
  type Ctx = { oidc?: { params?: { grant_type?: unknown } } };
  const grantOf = (ctx: Ctx) => String((ctx.oidc?.params?.grant_type as string | undefined) ?? '');
  provider.on('grant.success', (ctx: Ctx) => tokenGrants.push(grantOf(ctx)));
  provider.on('grant.error', (ctx: Ctx) => tokenGrants.push(`${grantOf(ctx)}:error`));

  const interaction = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      if (req.method === 'POST' || op.autoLogin) {
        const form = req.method === 'POST' ? await readForm(req) : undefined;
        const accountId = form?.get('login') ?? op.loginAs;
        return provider.interactionFinished(req, res, { login: { accountId } });
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(
        `<!doctype html><title>Upstream sign-in</title><h1>Upstream sign-in</h1>` +
          `<form method="post" action="${esc(path)}"><input name="login" value="${esc(op.loginAs)}">` +
          `<button type="submit">Sign in</button></form>`,
      );
    }
    // consent: everything asked is granted (a first-party upstream).
    const grant = new provider.Grant({ accountId: details.session!.accountId, clientId });
    grant.addOIDCScope(String((details.params.scope as string | undefined) ?? 'openid'));
    const claims = (details.prompt.details.missingOIDCClaims as string[] | undefined) ?? [];
    if (claims.length) grant.addOIDCClaims(claims);
    const grantId = await grant.save();
    return provider.interactionFinished(req, res, { consent: { grantId } });
  };

  handler = (req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    hits[path] = (hits[path] ?? 0) + 1;
    if (path.startsWith('/interaction/')) {
      interaction(req, res, path).catch((e: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`interaction failed: ${e.message}`);
      });
      return;
    }
    const fail = op.failTokenRequests;
    if (path === '/token' && req.method === 'POST' && fail && fail.count > 0) {
      fail.count--;
      tokenGrants.push('(refused)');
      req.resume();
      res.writeHead(fail.status, {
        'content-type': 'application/json',
        ...(fail.retryAfter !== undefined ? { 'retry-after': String(fail.retryAfter) } : {}),
      });
      res.end(JSON.stringify({ error: fail.status === 429 ? 'slow_down' : 'server_error' }));
      return;
    }
    opCallback(req, res);
  };

  const agent = new Agent({ connect: { ca: cert.cert } });
  op.fetch = async (url, init = {}) =>
    (await undiciFetch(url, { ...init, redirect: 'manual', dispatcher: agent })) as unknown as Response;

  op.follow = async (start, jar = new CookieJar()) => {
    let url = new URL(start);
    for (let i = 0; i < 20; i++) {
      if (url.origin !== new URL(issuer).origin) return url;
      const res = await op.fetch(url.toString(), { headers: { cookie: jar.header() } });
      jar.take(res);
      const loc = res.headers.get('location');
      if (loc) {
        url = new URL(loc, url);
        continue;
      }
      const html = await res.text();
      const form = /<form method="post" action="([^"]+)">/.exec(html);
      if (res.status === 200 && form) {
        const post = await op.fetch(new URL(form[1], issuer).toString(), {
          method: 'POST',
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ login: op.loginAs }).toString(),
        });
        jar.take(post);
        const next = post.headers.get('location');
        if (!next) throw new Error(`upstream login form answered ${post.status}: ${await post.text()}`);
        url = new URL(next, url);
        continue;
      }
      throw new Error(`upstream answered ${res.status} at ${url.pathname}: ${html.slice(0, 300)}`);
    }
    throw new Error('too many upstream redirects');
  };

  op.close = async () => {
    await agent.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (!opts.cert) rmSync(cert.dir, { recursive: true, force: true });
  };
  return op;
}
