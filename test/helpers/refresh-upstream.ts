/**
 * A real upstream OpenID provider for the token refresh tests: node-oidc-provider over HTTPS
 * on loopback (a throwaway certificate), one confidential client, refresh tokens on every
 * code grant, a short access token lifetime, and `rotateRefreshToken` as the test wants it.
 * Interactions are answered by the helper itself (login as the account the test names, consent
 * to everything asked), so `signIn` runs a real authorization code flow with PKCE and returns
 * the upstream's own tokens. Every POST to the token endpoint is counted, by grant type; every
 * refresh_token grant is also logged (the refresh token presented, what was answered, and how
 * many refreshes were in flight at once), so a test can tell concurrent scanners apart from
 * serial ones and match each stored token with the answer that issued it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import Provider from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';
import { makeCert, type TestCert } from './https-issuer.js';

interface OidcGrant {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ prompt: { name: string }; params: Record<string, string>; session?: { accountId: string } }>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    opts?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  Grant: new (p: { accountId: string; clientId: string }) => OidcGrant;
}

export interface UpstreamTokens {
  access_token: string;
  refresh_token: string;
  id_token?: string;
  expires_in: number;
}

/** One refresh_token grant as the upstream saw it. */
export interface RefreshCall {
  /** The refresh token presented. */
  presented: string;
  /** Refresh grants in flight when this one arrived, itself included. */
  inFlightAtArrival: number;
  arrivedAt: number;
  /** Set once the answer is written. */
  answeredAt?: number;
  status?: number;
  /** The tokens the answer carried (after omitRefreshTokenOnRefresh, if set). */
  issued?: { access_token?: string; refresh_token?: string };
}

export interface RefreshUpstream {
  issuer: string;
  clientId: string;
  clientSecret: string;
  cert: TestCert;
  /** POSTs to the token endpoint, by grant_type. */
  tokenCalls: Record<string, number>;
  /** Every refresh_token grant, in arrival order. */
  refreshes: RefreshCall[];
  /** Refresh grants being answered right now, and the most there ever were at once. */
  refreshInFlight: { now: number; max: number };
  /** Refresh answers from which a refresh_token was removed (omitRefreshTokenOnRefresh). */
  stripped: { count: number };
  /** Runs an authorization code flow (PKCE) as `accountId`; the upstream's tokens. */
  signIn(accountId: string): Promise<UpstreamTokens>;
  /** Revokes a refresh token at the upstream (RFC 7009). */
  revoke(refreshToken: string): Promise<void>;
  /** Answers the next `n` token requests with this HTTP status instead (429, 503, …); calls queue up. */
  failNext(n: number, status: number): void;
  close(): Promise<void>;
}

const b64url = (b: Buffer) => b.toString('base64url');

/** Hands the complete answer body to `onBody` once written, passing it through unchanged. */
function tapBody(res: ServerResponse, onBody: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = ((c: unknown, ...rest: unknown[]) => {
    if (c && typeof c !== 'function') chunks.push(Buffer.from(c as Buffer));
    return (write as (...a: unknown[]) => boolean)(c, ...rest);
  }) as typeof res.write;
  res.end = ((c?: unknown, ...rest: unknown[]) => {
    if (c && typeof c !== 'function') chunks.push(Buffer.from(c as Buffer));
    onBody(Buffer.concat(chunks));
    return (end as (...a: unknown[]) => ServerResponse)(c, ...rest);
  }) as typeof res.end;
}

/** Rewrites a JSON answer without its refresh_token, whatever the provider wrote. */
function stripRefreshToken(res: ServerResponse, onStripped: () => void): void {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = ((c: unknown) => {
    if (c) chunks.push(Buffer.from(c as Buffer));
    return true;
  }) as typeof res.write;
  res.end = ((c?: unknown) => {
    if (c && typeof c !== 'function') chunks.push(Buffer.from(c as Buffer));
    let out = Buffer.concat(chunks);
    try {
      const body = JSON.parse(out.toString()) as Record<string, unknown>;
      if ('refresh_token' in body) onStripped();
      delete body.refresh_token;
      out = Buffer.from(JSON.stringify(body));
    } catch {
      // not JSON: passed through as written
    }
    if (!res.headersSent) res.setHeader('content-length', out.length);
    write(out);
    return end();
  }) as typeof res.end;
}

export async function startRefreshUpstream(
  opts: {
    rotateRefreshToken?: boolean;
    accessTtlSeconds?: number;
    /** Remove `refresh_token` from refresh_token grant answers (RFC 6749 §6 lets a server omit it). */
    omitRefreshTokenOnRefresh?: boolean;
    /** Hold each refresh_token grant this long before answering, so concurrent scanners overlap. */
    refreshDelayMs?: number;
  } = {},
): Promise<RefreshUpstream> {
  const cert = makeCert();
  const clientId = `rp-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const redirectUri = 'https://rp.example.test/cb';
  const tokenCalls: Record<string, number> = {};
  const stripped = { count: 0 };
  const refreshes: RefreshCall[] = [];
  const refreshInFlight = { now: 0, max: 0 };
  const failing: number[] = [];
  // Made once the server listens (the issuer names its port); the handler runs only after that.
  const late: { provider?: OidcProvider; cb?: (req: IncomingMessage, res: ServerResponse) => void } = {};

  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    void (async () => {
      if (req.url?.startsWith('/interaction/')) {
        const details = await late.provider!.interactionDetails(req, res);
        if (details.prompt.name === 'login') {
          const accountId = pendingAccount;
          return late.provider!.interactionFinished(
            req,
            res,
            { login: { accountId } },
            { mergeWithLastSubmission: false },
          );
        }
        const grant = new late.provider!.Grant({
          accountId: details.session!.accountId,
          clientId: details.params.client_id,
        });
        grant.addOIDCScope(details.params.scope);
        const grantId = await grant.save();
        return late.provider!.interactionFinished(
          req,
          res,
          { consent: { grantId } },
          { mergeWithLastSubmission: true },
        );
      }
      if (req.method === 'POST' && req.url?.startsWith('/token')) {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = Buffer.concat(chunks);
        const grantType = new URLSearchParams(body.toString()).get('grant_type') ?? '(none)';
        tokenCalls[grantType] = (tokenCalls[grantType] ?? 0) + 1;
        if (grantType === 'refresh_token') {
          refreshInFlight.now++;
          refreshInFlight.max = Math.max(refreshInFlight.max, refreshInFlight.now);
          const call: RefreshCall = {
            presented: new URLSearchParams(body.toString()).get('refresh_token') ?? '',
            inFlightAtArrival: refreshInFlight.now,
            arrivedAt: Date.now(),
          };
          refreshes.push(call);
          res.once('close', () => refreshInFlight.now--);
          tapBody(res, (out) => {
            call.answeredAt = Date.now();
            call.status = res.statusCode;
            try {
              const json = JSON.parse(out.toString()) as { access_token?: string; refresh_token?: string };
              call.issued = { access_token: json.access_token, refresh_token: json.refresh_token };
            } catch {
              // not JSON (a failNext answer): nothing issued
            }
          });
        }
        const failStatus = failing.shift();
        if (failStatus !== undefined) {
          res.writeHead(failStatus, { 'content-type': 'text/plain', 'retry-after': '1' });
          return res.end('upstream unavailable');
        }
        // Replay the body for the provider: the stream was consumed here.
        const { Readable } = await import('node:stream');
        const replay = Object.assign(Readable.from([body]), {
          headers: req.headers,
          method: req.method,
          url: req.url,
          socket: req.socket,
          connection: req.socket,
          httpVersion: req.httpVersion,
        });
        if (grantType === 'refresh_token' && opts.refreshDelayMs)
          await new Promise((r) => setTimeout(r, opts.refreshDelayMs));
        if (grantType === 'refresh_token' && opts.omitRefreshTokenOnRefresh)
          stripRefreshToken(res, () => stripped.count++);
        return late.cb!(replay as unknown as IncomingMessage, res);
      }
      late.cb!(req, res);
    })().catch((e: unknown) => {
      res.statusCode = 500;
      res.end(String(e));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let pendingAccount = 'nobody';

  const P = Provider as unknown as new (iss: string, conf: Record<string, unknown>) => OidcProvider;
  const provider = new P(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    features: { devInteractions: { enabled: false }, revocation: { enabled: true } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    issueRefreshToken: () => true,
    rotateRefreshToken: opts.rotateRefreshToken ?? true,
    ttl: {
      AccessToken: opts.accessTtlSeconds ?? 120,
      RefreshToken: 86_400,
      Grant: 86_400,
      Session: 3600,
      Interaction: 600,
      IdToken: 3600,
    },
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(16).toString('hex')] },
  });
  late.provider = provider;
  late.cb = provider.callback();

  const dispatcher = new Agent({ connect: { ca: cert.cert } });
  const pair = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`;
  const basic = `Basic ${Buffer.from(pair).toString('base64')}`;

  async function signIn(accountId: string): Promise<UpstreamTokens> {
    pendingAccount = accountId;
    const verifier = b64url(randomBytes(32));
    const challenge = b64url(createHash('sha256').update(verifier).digest());
    const auth = new URL(`${issuer}/auth`);
    auth.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: 'openid',
      state: b64url(randomBytes(8)),
      nonce: b64url(randomBytes(8)),
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    const jar = new Map<string, string>();
    let url = auth.toString();
    for (let i = 0; i < 10; i++) {
      const r = await undiciFetch(url, {
        redirect: 'manual',
        dispatcher,
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      for (const c of r.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const eq = pair.indexOf('=');
        jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      const loc = r.headers.get('location');
      if (!loc) throw new Error(`upstream sign-in stopped at ${url}: HTTP ${r.status} ${await r.text()}`);
      const next = new URL(loc, url);
      if (next.toString().startsWith(redirectUri)) {
        const code = next.searchParams.get('code');
        if (!code) throw new Error(`no code: ${next.toString()}`);
        const t = await undiciFetch(`${issuer}/token`, {
          method: 'POST',
          dispatcher,
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            redirect_uri: redirectUri,
            code_verifier: verifier,
          }).toString(),
        });
        const body = (await t.json()) as UpstreamTokens;
        if (!t.ok || !body.refresh_token) throw new Error(`token: HTTP ${t.status} ${JSON.stringify(body)}`);
        return body;
      }
      url = next.toString();
    }
    throw new Error('upstream sign-in: too many redirects');
  }

  return {
    issuer,
    clientId,
    clientSecret,
    cert,
    tokenCalls,
    refreshes,
    refreshInFlight,
    stripped,
    signIn,
    revoke: async (refreshToken) => {
      const r = await undiciFetch(`${issuer}/token/revocation`, {
        method: 'POST',
        dispatcher,
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token' }).toString(),
      });
      if (!r.ok) throw new Error(`revoke: HTTP ${r.status}`);
    },
    failNext: (n, status) => {
      for (let i = 0; i < n; i++) failing.push(status);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await dispatcher.close();
      rmSync(cert.dir, { recursive: true, force: true });
    },
  };
}
