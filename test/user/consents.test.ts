/**
 * GET/DELETE /api/user/consents: the list after first-party logins and a third-party
 * consent; withdrawal revokes the tokens granted under it at once (introspection inactive,
 * refresh dead); another user's consent is 404; every error carries error_code and error_id.
 * The first-party tokens here carry the account scope, which the whole list needs
 * (docs/scopes.md); what a token without it sees is in account-scope.test.ts.
 */
import test from 'ava';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { ACCOUNT_SCOPE, loginKit } from '../helpers/login.js';
import { createUserIn, introspectAs, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { REDIRECT, type App } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { assertUserError } from '../helpers/user-errors.js';
import { api } from '../helpers/api.js';

let db: TestDb;
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
  ({ db, d, app, sink } = env);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const newUser = () => createUserIn(env, 'consent');

const introspect = (token: string) => introspectAs(env, token);

/** Signs in at a third-party client (Partner unless named), allows the consent screen and redeems the code. */
const thirdPartyTokens = (email: string, client = app.thirdParty) => kit.consentedTokens(client, email);

const list = (at: string) => api(d.url, 'GET', '/api/user/consents', { token: at });
const withdraw = (at: string, id: string) =>
  fetch(`${d.url}/api/user/consents/${encodeURIComponent(id)}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${at}` },
  });

test('the list holds the first-party grant and the third-party consent, per the Consent record', async (t) => {
  const user = await newUser();
  const first = await kit.tokensFor(app.web, user.email, ACCOUNT_SCOPE);
  await kit.tokensFor(app.web, user.email, ACCOUNT_SCOPE);
  const r1 = await list(first.access_token);
  t.is(r1.status, 200);
  t.is(r1.body.total, r1.body.consents.length);
  t.is(r1.body.consents.length, 1, 'two first-party logins: one consent');
  const web = r1.body.consents[0];
  t.is(web.clientId, app.web.clientId);
  t.is(web.clientName, 'Web');
  t.deepEqual(web.scopes, ['openid', 'email', 'account']);
  t.deepEqual(web.selectedScopes, web.scopes);
  t.true(Number.isInteger(web.grantedAt) && web.grantedAt > 1e12, 'epoch ms');
  for (const k of Object.keys(web)) t.not(web[k], null, k);
  t.false('expiresAt' in web);
  t.false('clientLogoUri' in web);

  await thirdPartyTokens(user.email);
  const r2 = await list(first.access_token);
  t.is(r2.body.total, 2);
  const partner = r2.body.consents.find((c: any) => c.clientId === app.thirdParty.clientId);
  t.truthy(partner);
  t.is(partner.clientName, 'Partner');
  t.deepEqual(partner.scopes, ['openid', 'email']);
});

test('withdrawal revokes the tokens granted under the consent at once', async (t) => {
  const user = await newUser();
  const own = await kit.tokensFor(app.web, user.email, ACCOUNT_SCOPE);
  const partner = await thirdPartyTokens(user.email);
  t.is((await introspect(partner.access_token)).active, true);
  const consent = (await list(own.access_token)).body.consents.find((c: any) => c.clientId === app.thirdParty.clientId);
  const res = await withdraw(own.access_token, consent.id);
  t.is(res.status, 204);
  t.is((await introspect(partner.access_token)).active, false);
  const r = await kit.refresh(partner.refresh_token, app.thirdParty);
  t.is(r.body.error, 'invalid_grant');
  const after = await list(own.access_token);
  t.false(after.body.consents.some((c: any) => c.id === consent.id));
  t.is((await introspect(own.access_token)).active, true, 'the first-party grant is untouched');
  await assertUserError(t, await withdraw(own.access_token, consent.id), 404);
});

test("withdrawing the first-party consent revokes that client's families, including the caller's token", async (t) => {
  const user = await newUser();
  const a = await kit.tokensFor(app.web, user.email, ACCOUNT_SCOPE);
  const b = await kit.tokensFor(app.web, user.email, ACCOUNT_SCOPE);
  const consent = (await list(a.access_token)).body.consents[0];
  t.is((await withdraw(a.access_token, consent.id)).status, 204);
  t.is((await introspect(a.access_token)).active, false);
  t.is((await introspect(b.access_token)).active, false);
  t.is((await kit.refresh(b.refresh_token, app.web)).body.error, 'invalid_grant');
  await assertUserError(
    t,
    await fetch(`${d.url}/api/user/consents`, { headers: { authorization: `Bearer ${a.access_token}` } }),
    401,
  );
});

test("another user's consent id and an unknown id are 404 with error_code and error_id; nothing is revoked", async (t) => {
  const alice = await newUser();
  const bob = await newUser();
  const aliceTokens = await thirdPartyTokens(alice.email);
  const bobTokens = await kit.tokensFor(app.web, bob.email, ACCOUNT_SCOPE);
  const aliceOwn = await kit.tokensFor(app.web, alice.email, ACCOUNT_SCOPE);
  const aliceConsent = (await list(aliceOwn.access_token)).body.consents.find(
    (c: any) => c.clientId === app.thirdParty.clientId,
  );
  await assertUserError(t, await withdraw(bobTokens.access_token, aliceConsent.id), 404);
  await assertUserError(t, await withdraw(bobTokens.access_token, 'cns_nope'), 404);
  t.is((await introspect(aliceTokens.access_token)).active, true);
  t.true((await list(aliceOwn.access_token)).body.consents.some((c: any) => c.id === aliceConsent.id));
});

test('no or a bad token: 401 with error_code and error_id', async (t) => {
  await assertUserError(t, await fetch(`${d.url}/api/user/consents`), 401);
  await assertUserError(
    t,
    await fetch(`${d.url}/api/user/consents`, { headers: { authorization: 'Bearer nope' } }),
    401,
  );
  await assertUserError(t, await fetch(`${d.url}/api/user/consents/x`, { method: 'DELETE' }), 401);
});

// Serial, so it runs before the concurrent tests: it changes the tenant's policy versions.
test.serial('policyVersions once the tenant sets them, and clientLogoUri when the client has a logo', async (t) => {
  const LOGO = 'https://partner.example.test/logo.png';
  const { ds, directory } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const created = await directory.createClient(
    app.tenantId,
    { name: 'Gallery', redirect_uris: [REDIRECT], logo_uri: LOGO },
    actor,
  );
  const gallery = { clientId: created.client.client_id, secret: created.client_secret! };
  try {
    const user = await newUser();
    const own = await kit.tokensFor(app.web, user.email, ACCOUNT_SCOPE);
    const before = (await list(own.access_token)).body.consents[0];
    t.false('policyVersions' in before, 'no versions while the tenant sets none');

    await directory.setPolicyVersions(app.tenantId, { privacy_policy_version: '2026-11', tos_version: 'v7' }, actor);
    const { consentPage } = await thirdPartyTokens(user.email, gallery);
    t.regex(consentPage, /the privacy policy \(version 2026-11\) and the terms of service \(version v7\)/);
    const r = await list(own.access_token);
    t.is(r.status, 200);
    const g = r.body.consents.find((c: any) => c.clientId === gallery.clientId);
    t.is(g.clientName, 'Gallery');
    t.is(g.clientLogoUri, LOGO);
    t.deepEqual(g.policyVersions, { privacyPolicyVersion: '2026-11', tosVersion: 'v7', consentVersion: 1 });
    const web = r.body.consents.find((c: any) => c.clientId === app.web.clientId);
    t.false('clientLogoUri' in web, 'a client without a logo has none');
    t.false('policyVersions' in web, 'a consent keeps the versions it was given under');

    // The next grant at the first-party client takes the versions now in force.
    await kit.tokensFor(app.web, user.email, ACCOUNT_SCOPE);
    const again = (await list(own.access_token)).body.consents.find((c: any) => c.clientId === app.web.clientId);
    t.deepEqual(again.policyVersions, { privacyPolicyVersion: '2026-11', tosVersion: 'v7', consentVersion: 1 });
  } finally {
    await directory.setPolicyVersions(app.tenantId, {}, actor);
    await ds.destroy();
  }
});
