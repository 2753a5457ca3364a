/**
 * The `account` scope on the user API (docs/scopes.md, "The account scope"): only a token with
 * it, from a first-party client, exports the user's data and sees and withdraws every consent.
 * Any other user token (a third-party app's `openid` token, say) sees only its own client's
 * consent and may withdraw only that one; the data export is 403 insufficient_scope. A
 * third-party client never gets the scope: registration refuses it, and /authorize drops it
 * for a client registered with it before that.
 */
import test from 'ava';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { ACCOUNT_SCOPE, loginKit } from '../helpers/login.js';
import { createUserIn, introspectAs, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { authorizeUrl, get, pkce, REDIRECT, sql, type App } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { assertUserError } from '../helpers/user-errors.js';
import { api } from '../helpers/api.js';

let d: Daemon;
let app: App;
let sink: SmtpSink;
const kit = loginKit(
  () => d.url,
  () => sink,
);

let env: LoginEnv;
test.before(async () => {
  env = await startLoginEnv();
  ({ d, app, sink } = env);
});
test.after.always(() => stopLoginEnv(env));

const newUser = () => createUserIn(env, 'acct');
const introspect = (token: string) => introspectAs(env, token);
const bearer = (at: string) => ({ authorization: `Bearer ${at}` });

const list = (at: string) =>
  api<{ consents: Record<string, any>[]; total: number }>(d.url, 'GET', '/api/user/consents', { token: at });
const withdraw = (at: string, id: string) =>
  fetch(`${d.url}/api/user/consents/${encodeURIComponent(id)}`, { method: 'DELETE', headers: bearer(at) });
const exportData = (at: string) =>
  fetch(`${d.url}/api/user/data-export`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(at) },
    body: JSON.stringify({ sections: ['profile', 'sessions'] }),
  });

/** A 403 insufficient_scope of the user API: the error object with its codes, and the RFC 6750 §3.1 challenge. */
async function assertNeedsAccount(t: Parameters<typeof assertUserError>[0], res: Response) {
  const challenge = res.headers.get('www-authenticate') ?? '';
  const body = await assertUserError(t, res, 403);
  t.is(body.error, 'insufficient_scope');
  t.is(body.error_code, 'UA403001');
  t.regex(challenge, /^Bearer /);
  t.true(challenge.includes('error="insufficient_scope"'), challenge);
  t.true(challenge.includes('scope="account"'), challenge);
}

/** A user with a first-party grant (Web) and a third-party consent (Partner, `openid` only). */
async function userWithTwoApps() {
  const user = await newUser();
  const own = await kit.tokensFor(app.web, user.email, ACCOUNT_SCOPE);
  const partner = await kit.consentedTokens(app.thirdParty, user.email, 'openid');
  const all = (await list(own.access_token)).body.consents;
  const webConsent = all.find((c) => c.clientId === app.web.clientId)!;
  const partnerConsent = all.find((c) => c.clientId === app.thirdParty.clientId)!;
  return { user, own, partner, webConsent, partnerConsent };
}

test("a third-party app's openid token cannot export the user's data: 403 insufficient_scope naming account", async (t) => {
  const { partner } = await userWithTwoApps();
  t.is(partner.scope, 'openid');
  await assertNeedsAccount(t, await exportData(partner.access_token));
  await assertNeedsAccount(
    t,
    await fetch(`${d.url}/api/user/data-export/dex_anything`, { headers: bearer(partner.access_token) }),
  );
  // The scope is checked before the body: a third-party token learns nothing from a 400.
  const bad = await fetch(`${d.url}/api/user/data-export`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(partner.access_token) },
    body: JSON.stringify({ nope: 1 }),
  });
  await assertNeedsAccount(t, bad);
});

test("a third-party app's token lists only its own client's consent", async (t) => {
  const { partner, partnerConsent } = await userWithTwoApps();
  const r = await list(partner.access_token);
  t.is(r.status, 200);
  t.is(r.body.total, 1);
  t.is(r.body.consents.length, 1);
  t.is(r.body.consents[0].id, partnerConsent.id);
  t.is(r.body.consents[0].clientId, app.thirdParty.clientId);
});

test("a third-party app's token cannot withdraw another app's consent: 404, and the consent and its tokens stay", async (t) => {
  const { own, partner, webConsent } = await userWithTwoApps();
  const body = await assertUserError(t, await withdraw(partner.access_token, webConsent.id), 404);
  t.is(body.error, 'not_found');
  t.is(body.error_code, 'UR404001');
  t.true(
    (await list(own.access_token)).body.consents.some((c) => c.id === webConsent.id),
    'still granted',
  );
  t.is((await introspect(own.access_token)).active, true, "the other app's token is not revoked");
  // The same answer as for an id that does not exist: nothing is revealed.
  await assertUserError(t, await withdraw(partner.access_token, 'cns_nope'), 404);
});

test("a third-party app's token withdraws its own consent", async (t) => {
  const { own, partner, partnerConsent } = await userWithTwoApps();
  t.is((await withdraw(partner.access_token, partnerConsent.id)).status, 204);
  t.is((await introspect(partner.access_token)).active, false, 'its tokens are revoked');
  const left = (await list(own.access_token)).body.consents;
  t.false(left.some((c) => c.id === partnerConsent.id));
  t.true(
    left.some((c) => c.clientId === app.web.clientId),
    'the first-party grant is untouched',
  );
});

test("a first-party token with account sees every consent, exports the data and withdraws another app's consent", async (t) => {
  const { own, partner, partnerConsent } = await userWithTwoApps();
  t.deepEqual(own.scope.split(' ').sort(), ['account', 'email', 'openid']);
  const r = await list(own.access_token);
  t.is(r.status, 200);
  t.is(r.body.total, 2);
  const exp = await exportData(own.access_token);
  t.is(exp.status, 200);
  t.is(((await exp.json()) as { status: string }).status, 'completed');
  t.is((await withdraw(own.access_token, partnerConsent.id)).status, 204);
  t.is((await introspect(partner.access_token)).active, false);
});

test('a first-party token without account is confined like any other: its own consent, no export', async (t) => {
  const { webConsent } = await userWithTwoApps();
  const user = await newUser();
  const plain = await kit.tokensFor(app.web, user.email);
  t.is(plain.scope, 'openid email');
  await kit.consentedTokens(app.thirdParty, user.email, 'openid');
  const r = await list(plain.access_token);
  t.is(r.body.total, 1);
  t.is(r.body.consents[0].clientId, app.web.clientId);
  await assertNeedsAccount(t, await exportData(plain.access_token));
  // Another user's consent stays 404 as before.
  await assertUserError(t, await withdraw(plain.access_token, webConsent.id), 404);
});

test('registration refuses the account scope on a third-party client and accepts it on a first-party one', async (t) => {
  const tok = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(app.admin) },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  const admin = ((await tok.json()) as { access_token: string }).access_token;
  const create = (body: Record<string, unknown>) =>
    fetch(`${d.url}/api/admin/tenants/${app.tenantId}/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ name: 'Acct', redirect_uris: [REDIRECT], scopes: ['openid', 'account'], ...body }),
    });
  const refused = await create({});
  t.is(refused.status, 400);
  const b = (await refused.json()) as { error: string; error_description: string };
  t.is(b.error, 'invalid_request');
  t.regex(b.error_description, /body\.scopes.*account may be registered only on a first-party client/);
  t.is((await create({ first_party: true })).status, 201);
});

test('a third-party client not registered with account asking for it: invalid_scope', async (t) => {
  const user = await newUser();
  const jar = await kit.signIn(app.thirdParty.clientId, user.email);
  const p = pkce();
  const r = await get(
    authorizeUrl(d.url, kit.authParams(app.thirdParty.clientId, p.challenge, { scope: 'openid account' })),
    jar,
  );
  t.is(r.status, 302);
  t.is(new URL(r.headers.get('location')!).searchParams.get('error'), 'invalid_scope');
});

// Serial: it makes a client of its own and changes it in the database.
test.serial('a third-party client registered with account before the rule: the scope is dropped', async (t) => {
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  let legacy: { clientId: string; secret: string };
  try {
    const c = await directory.createClient(
      app.tenantId,
      { name: 'Legacy', redirect_uris: [REDIRECT], first_party: true, scopes: ['openid', 'email', 'account'] },
      { type: 'system', id: 'test' },
    );
    legacy = { clientId: c.client.client_id, secret: c.client_secret! };
  } finally {
    await ds.destroy();
  }
  // What registration now refuses: a third-party client holding account.
  await sql(env.db.url, env.db.dir, 'UPDATE clients SET first_party = 0 WHERE client_id = ?', [legacy.clientId]);
  const user = await newUser();
  const tokens = await kit.consentedTokens(legacy, user.email, 'openid email account');
  const items = [...tokens.consentPage.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]);
  t.is(items.length, 2, `the consent page lists openid and email only: ${items.join(' | ')}`);
  t.false(items.includes('account'));
  t.is(tokens.scope, 'openid email', 'the token response says what was granted (RFC 6749 §5.1)');
  const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString()) as {
    scope: string;
  };
  t.is(claims.scope, 'openid email');
  await assertNeedsAccount(t, await exportData(tokens.access_token));
  t.is((await list(tokens.access_token)).body.total, 1);
});

test.serial('an account token loses its reach when its client is no longer first-party', async (t) => {
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  let client: { clientId: string; secret: string };
  try {
    const c = await directory.createClient(
      app.tenantId,
      { name: 'Demoted', redirect_uris: [REDIRECT], first_party: true, scopes: ['openid', 'email', 'account'] },
      { type: 'system', id: 'test' },
    );
    client = { clientId: c.client.client_id, secret: c.client_secret! };
  } finally {
    await ds.destroy();
  }
  const user = await newUser();
  const tokens = await kit.tokensFor(client, user.email, ACCOUNT_SCOPE);
  t.is((await exportData(tokens.access_token)).status, 200);
  await sql(env.db.url, env.db.dir, 'UPDATE clients SET first_party = 0 WHERE client_id = ?', [client.clientId]);
  await assertNeedsAccount(t, await exportData(tokens.access_token));
});
