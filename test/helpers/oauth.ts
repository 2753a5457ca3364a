/**
 * Shared pieces for login and token tests: a seeded tenant with users and clients, a tiny
 * cookie jar, and the spec's five-request login flow driven over HTTP.
 */
import { createHash, randomBytes } from 'node:crypto';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { openServices, activeTenant } from './seed.js';

export const REDIRECT = 'https://rp.example.test/callback';
export const NATIVE_REDIRECT = 'http://127.0.0.1:7777/cb';

export interface App {
  tenantId: string;
  user: { id: string; email: string };
  web: { clientId: string; secret: string };
  thirdParty: { clientId: string; secret: string };
  native: { clientId: string };
  admin: { clientId: string; secret: string };
}

export async function seedApp(databaseUrl: string, dataDir: string): Promise<App> {
  const { ds, directory, provisioning } = await openServices(databaseUrl, dataDir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const t = await activeTenant(provisioning, { name: 'Login tenant' }, actor);
    const user = await directory.createUser(t.id, { email: 'alice@example.com', name: 'Alice' }, actor);
    const web = await directory.createClient(
      t.id,
      {
        name: 'Web',
        redirect_uris: [REDIRECT],
        first_party: true,
        // account: the user API (/api/user/…) reaches every consent and the data export only
        // with it, and only a first-party client may have it (docs/scopes.md).
        scopes: ['openid', 'profile', 'email', 'offline_access', 'account'],
      },
      actor,
    );
    const third = await directory.createClient(
      t.id,
      { name: 'Partner', redirect_uris: [REDIRECT], first_party: false },
      actor,
    );
    const native = await directory.createClient(
      t.id,
      { name: 'Native', redirect_uris: [NATIVE_REDIRECT], public: true, first_party: true },
      actor,
    );
    const admin = await directory.createClient(
      t.id,
      { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
      actor,
    );
    return {
      tenantId: t.id,
      user: { id: user.id, email: user.email },
      web: { clientId: web.client.client_id, secret: web.client_secret! },
      thirdParty: { clientId: third.client.client_id, secret: third.client_secret! },
      native: { clientId: native.client.client_id },
      admin: { clientId: admin.client.client_id, secret: admin.client_secret! },
    };
  } finally {
    await ds.destroy();
  }
}

/** Runs SQL against the test database (to suspend a tenant or disable a user, for example). */
export async function sql(
  databaseUrl: string,
  dataDir: string,
  query: string,
  params: unknown[] = [],
): Promise<unknown> {
  const { ds } = await openServices(databaseUrl, dataDir);
  try {
    return await ds.query(query, params);
  } finally {
    await ds.destroy();
  }
}

export class CookieJar {
  readonly cookies = new Map<string, string>();
  /** Raw Set-Cookie lines as received, to check their attributes. */
  readonly raw: string[] = [];
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      this.raw.push(line);
      const [pair] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (/max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizeUrl(base: string, p: Record<string, string | undefined>): string {
  const u = new URL(`${base}/authorize`);
  for (const [k, v] of Object.entries(p)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

/** The login page's hidden authorization challenge id. */
export function challengeFrom(html: string): string {
  const m = /name="challenge" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no challenge in page:\n${html.slice(0, 500)}`);
  return m[1];
}

export function csrfFrom(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no csrf in page');
  return m[1];
}

export async function postJson(url: string, body: unknown, jar?: CookieJar): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(jar ? { cookie: jar.header() } : {}) },
    body: JSON.stringify(body),
  });
  jar?.take(res);
  return res;
}

export async function get(url: string, jar?: CookieJar): Promise<Response> {
  const res = await fetch(url, { redirect: 'manual', headers: jar ? { cookie: jar.header() } : {} });
  jar?.take(res);
  return res;
}

/** The six-digit code in a mail's subject or text. */
export function codeFrom(text: string): string {
  const m = /\b(\d{6})\b/.exec(text);
  if (!m) throw new Error(`no code in mail: ${text}`);
  return m[1];
}
