/**
 * DPoP (RFC 9449, docs/dpop.md) over HTTP against one daemon: openid-client's DPoP through a
 * real code + PKCE flow, refresh and UserInfo; each refusal of the proof (§4.3), of the code's
 * binding (§10), of a bound refresh token (§5), of a bound token presented as Bearer (§7.2) at
 * UserInfo, the account API and the admin API; and the tenant's nonce policy (§8, §9).
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { loginKit, type ClientCreds } from '../helpers/login.js';
import { authorizeUrl, get, NATIVE_REDIRECT, pkce, seedApp, sql, type App, type CookieJar } from '../helpers/oauth.js';
import { ath, proof, proofKey, type ProofKey } from '../helpers/dpop.js';
import { api } from '../helpers/api.js';
import { iam } from '../helpers/cli.js';
import { AT, putSettings, TE_GRANT } from '../helpers/token-exchange.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { deriveKey } from '../../shared/crypto.js';
import { dpopNonce, DPOP_NONCE_WINDOW_S } from '../../shared/services/dpop/index.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let rs: ClientCreds; // a resource server of the tenant: introspects
let other: { tenantId: string; admin: ClientCreds }; // the tenant whose policy requires nonces
let jar: CookieJar; // alice signed in at the native (public) client
let svc: ClientCreds; // may exchange its own tokens (RFC 8693)
let cliTenant: string; // the CLI's policy changes land here
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const r = await directory.createClient(
    app.tenantId,
    {
      name: 'RS',
      grant_types: ['client_credentials'],
      scopes: ['api'],
      resource_identifiers: ['https://api.example.test'],
    },
    actor,
  );
  rs = { clientId: r.client.client_id, secret: r.client_secret! };
  const s2 = await directory.createClient(
    app.tenantId,
    { name: 'svc', grant_types: ['client_credentials', TE_GRANT], scopes: ['svc'] },
    actor,
  );
  svc = { clientId: s2.client.client_id, secret: s2.client_secret! };
  const t2 = await activeTenant(provisioning, { name: 'Nonce tenant' }, actor);
  const a2 = await directory.createClient(
    t2.id,
    { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
    actor,
  );
  other = { tenantId: t2.id, admin: { clientId: a2.client.client_id, secret: a2.client_secret! } };
  cliTenant = (await activeTenant(provisioning, { name: 'CLI tenant' }, actor)).id;
  await ds.destroy();
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
  jar = await kit.signIn(app.native.clientId, app.user.email);
  const admin = await token({ grant_type: 'client_credentials' }, { basic: app.admin });
  await putSettings(d.url, admin.body.access_token, { enabled: true, allowedSubjectTokenTypes: ['access_token'] });
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

const form = (p: Record<string, string>) => new URLSearchParams(p);

/** POST /token with an optional DPoP proof; Basic for a confidential client. */
async function token(body: Record<string, string>, opts: { dpop?: string; basic?: ClientCreds } = {}) {
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(opts.basic ? { authorization: kit.basic(opts.basic) } : {}),
      ...(opts.dpop ? { dpop: opts.dpop } : {}),
    },
    body: form(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, string> };
}

/** A code for alice at the native client (prompt=none on the signed-in session). */
async function nativeCode(extra: Record<string, string> = {}) {
  const p = pkce();
  const r = await get(
    authorizeUrl(d.url, {
      response_type: 'code',
      client_id: app.native.clientId,
      redirect_uri: NATIVE_REDIRECT,
      scope: 'openid email',
      state: 's',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      prompt: 'none',
      ...extra,
    }),
    jar,
  );
  const loc = new URL(r.headers.get('location')!);
  return { code: loc.searchParams.get('code')!, verifier: p.verifier, loc };
}

const redeemForm = (c: { code: string; verifier: string }) => ({
  grant_type: 'authorization_code',
  client_id: app.native.clientId,
  code: c.code,
  redirect_uri: NATIVE_REDIRECT,
  code_verifier: c.verifier,
});

const thumbprint = (k: ProofKey) => calculateJwkThumbprint(k.jwk, 'sha256');

test('openid-client: code + PKCE with DPoP, refresh with DPoP, UserInfo with DPoP; introspection shows cnf.jkt; as Bearer the token is refused', async (t) => {
  const config = await oidc.discovery(
    new URL(d.url),
    app.native.clientId,
    { redirect_uris: [NATIVE_REDIRECT] },
    oidc.None(),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  t.true((config.serverMetadata().dpop_signing_alg_values_supported as string[]).includes('ES256'));
  const keys = await oidc.randomDPoPKeyPair('ES256');
  const DPoP = oidc.getDPoPHandle(config, keys);
  const jkt = await calculateJwkThumbprint(await exportJWK(keys.publicKey), 'sha256');
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: NATIVE_REDIRECT,
    scope: 'openid email',
    state: 'st',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    prompt: 'none',
    dpop_jkt: jkt,
  });
  const back = await get(url.toString(), jar);
  const tokens = await oidc.authorizationCodeGrant(
    config,
    new URL(back.headers.get('location')!),
    { pkceCodeVerifier: verifier, expectedState: 'st' },
    undefined,
    { DPoP },
  );
  t.is(tokens.token_type, 'dpop');
  t.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });
  const info = await oidc.fetchUserInfo(config, tokens.access_token, app.user.id, { DPoP });
  t.is(info.email, app.user.email);

  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
  t.is(refreshed.token_type, 'dpop');
  t.deepEqual(decodeJwt(refreshed.access_token).cnf, { jkt });

  // RFC 9449 §6.2: introspection returns the binding, for the resource server to compare.
  const intro = await fetch(`${d.url}/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(rs) },
    body: form({ token: refreshed.access_token }),
  });
  const ib = (await intro.json()) as Record<string, unknown>;
  t.is(ib.active, true);
  t.deepEqual(ib.cnf, { jkt });
  t.is(ib.token_type, 'DPoP');

  // §7.2: the bound token presented as a Bearer token, at UserInfo and at the account API.
  for (const path of ['/userinfo', '/api/user/consents']) {
    const r = await fetch(`${d.url}${path}`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    t.is(r.status, 401, path);
    t.is(((await r.json()) as { error: string }).error, 'invalid_token');
    t.regex(r.headers.get('www-authenticate')!, /^DPoP .*error="invalid_token"/);
  }
  // The account API with the DPoP scheme and a proof of the key (with ath) answers.
  const mine = { privateKey: keys.privateKey, jwk: await exportJWK(keys.publicKey) };
  const at = refreshed.access_token;
  const account = await fetch(`${d.url}/api/user/consents`, {
    headers: {
      authorization: `DPoP ${at}`,
      dpop: await proof(mine, 'GET', `${d.url}/api/user/consents`, { claims: { ath: ath(at) } }),
    },
  });
  t.is(account.status, 200);
  // A wrong ath (a proof made for another token) is refused at UserInfo (§4.3 check 12).
  const wrongAth = await fetch(`${d.url}/userinfo`, {
    headers: {
      authorization: `DPoP ${at}`,
      dpop: await proof(mine, 'GET', `${d.url}/userinfo`, { claims: { ath: ath(tokens.access_token) } }),
    },
  });
  t.is(wrongAth.status, 401);
  t.is(((await wrongAth.json()) as { error: string }).error, 'invalid_dpop_proof');
  t.regex(wrongAth.headers.get('www-authenticate')!, /^DPoP .*error="invalid_dpop_proof"/);
});

test('a code bound by dpop_jkt (§10) is refused with another key and without a proof; a public client refresh token is bound to its key (§5)', async (t) => {
  const k1 = await proofKey();
  const k2 = await proofKey();
  const c = await nativeCode({ dpop_jkt: await thumbprint(k1) });
  const htu = `${d.url}/token`;
  const other = await token(redeemForm(c), { dpop: await proof(k2, 'POST', htu) });
  t.is(other.status, 400);
  t.is(other.body.error, 'invalid_grant');
  const none = await token(redeemForm(c));
  t.is(none.body.error, 'invalid_grant');
  // The refusals spent nothing: the code still redeems with its key.
  const good = await token(redeemForm(c), { dpop: await proof(k1, 'POST', htu) });
  t.is(good.status, 200, JSON.stringify(good.body));
  t.is(good.body.token_type, 'DPoP');

  const refresh = (dpop?: string) =>
    token(
      { grant_type: 'refresh_token', client_id: app.native.clientId, refresh_token: good.body.refresh_token },
      { dpop },
    );
  const withOther = await refresh(await proof(k2, 'POST', htu));
  t.is(withOther.status, 400);
  t.is(withOther.body.error, 'invalid_grant');
  t.is((await refresh()).body.error, 'invalid_grant');
  const withKey = await refresh(await proof(k1, 'POST', htu));
  t.is(withKey.status, 200);
  t.deepEqual(decodeJwt(withKey.body.access_token).cnf, { jkt: await thumbprint(k1) });
  // A malformed dpop_jkt at the authorization request goes back as invalid_request.
  t.is((await nativeCode({ dpop_jkt: 'not-a-thumbprint' })).loc.searchParams.get('error'), 'invalid_request');
});

test('/token refuses each bad proof: wrong htm, wrong htu, old iat, reused jti, symmetric alg, private key in header, wrong typ', async (t) => {
  const k = await proofKey();
  const htu = `${d.url}/token`;
  const cc = (dpop: string) => token({ grant_type: 'client_credentials' }, { dpop, basic: app.admin });
  const { generateKeyPair, exportJWK: jwkOf } = await import('jose');
  const priv = await generateKeyPair('ES256', { extractable: true });
  const cases: [string, string][] = [
    ['wrong htm', await proof(k, 'GET', htu)],
    ['wrong htu', await proof(k, 'POST', `${d.url}/userinfo`)],
    ['old iat', await proof(k, 'POST', htu, { claims: { iat: Math.floor(Date.now() / 1000) - 300 } })],
    ['no jti', await proof(k, 'POST', htu, { claims: { jti: undefined } })],
    [
      'HS256',
      await proof(k, 'POST', htu, {
        header: { alg: 'HS256' },
        signWith: new TextEncoder().encode('0123456789abcdef0123456789abcdef'),
      }),
    ],
    [
      'private key in header',
      await proof({ privateKey: priv.privateKey, jwk: await jwkOf(priv.privateKey) }, 'POST', htu),
    ],
    ['wrong typ', await proof(k, 'POST', htu, { header: { typ: 'JWT' } })],
    ['another key signed', await proof(k, 'POST', htu, { signWith: priv.privateKey })],
  ];
  for (const [what, p] of cases) {
    const r = await cc(p);
    t.is(r.status, 400, what);
    t.is(r.body.error, 'invalid_dpop_proof', what);
  }
  // Query and fragment are not part of htu (§4.3 check 9); the same proof again is a replay (§11.1).
  const once = await proof(k, 'POST', `${htu}?x=1#f`);
  const first = await cc(once);
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.body.token_type, 'DPoP');
  const again = await cc(once);
  t.is(again.status, 400);
  t.is(again.body.error, 'invalid_dpop_proof');
  t.regex(again.body.error_description, /already used/);

  // The client's bound token at the admin API: refused as Bearer, accepted with its proof.
  const at = first.body.access_token;
  const path = `/api/admin/tenants/${app.tenantId}/dpop-policy`;
  const bearer = await api(d.url, 'GET', path, { token: at });
  t.is(bearer.status, 401);
  t.is(bearer.body.error, 'invalid_token');
  const bound = await api(d.url, 'GET', path, {
    headers: {
      authorization: `DPoP ${at}`,
      dpop: await proof(k, 'GET', `${d.url}${path}`, { claims: { ath: ath(at) } }),
    },
  });
  t.is(bound.status, 200);
  t.deepEqual(bound.body.effective, { requireNonce: false, requireDpop: false });
});

test('tenant policy: nonces required (missing → use_dpop_nonce, stale → use_dpop_nonce, current → tokens), proofs required; 401 use_dpop_nonce at a resource', async (t) => {
  const admin = other.admin;
  const plain = await token({ grant_type: 'client_credentials' }, { basic: admin });
  const path = `/api/admin/tenants/${other.tenantId}/dpop-policy`;
  const put = await api(d.url, 'PUT', path, {
    token: plain.body.access_token,
    body: { requireNonce: true, requireDpop: true },
  });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.deepEqual(put.body.effective, { requireNonce: true, requireDpop: true });
  const bad = await api(d.url, 'PUT', path, { token: plain.body.access_token, body: { requireNonce: 'yes' } });
  t.is(bad.status, 400);

  const k = await proofKey();
  const htu = `${d.url}/token`;
  const cc = (dpop?: string) => token({ grant_type: 'client_credentials' }, { dpop, basic: admin });
  const without = await cc();
  t.is(without.status, 400);
  t.is(without.body.error, 'invalid_dpop_proof');
  t.truthy(without.headers.get('dpop-nonce'));
  const missing = await cc(await proof(k, 'POST', htu));
  t.is(missing.status, 400);
  t.is(missing.body.error, 'use_dpop_nonce');
  const nonce = missing.headers.get('dpop-nonce')!;
  t.truthy(nonce);
  const window = Math.floor(Date.now() / 1000 / DPOP_NONCE_WINDOW_S);
  const stale = dpopNonce(deriveKey(TEST_SECRET_KEY, 'dpop-nonce'), window - 2);
  const old = await cc(await proof(k, 'POST', htu, { claims: { nonce: stale } }));
  t.is(old.body.error, 'use_dpop_nonce');
  const good = await cc(await proof(k, 'POST', htu, { claims: { nonce } }));
  t.is(good.status, 200, JSON.stringify(good.body));
  t.truthy(good.headers.get('dpop-nonce'));

  // §9: at a resource, a proof without the nonce is a 401 with the DPoP challenge and a nonce.
  const at = good.body.access_token;
  const res = await api(d.url, 'GET', path, {
    headers: {
      authorization: `DPoP ${at}`,
      dpop: await proof(k, 'GET', `${d.url}${path}`, { claims: { ath: ath(at) } }),
    },
  });
  t.is(res.status, 401);
  t.is(res.body.error, 'use_dpop_nonce');
  t.regex(res.headers.get('www-authenticate')!, /^DPoP .*error="use_dpop_nonce"/);
  const next = res.headers.get('dpop-nonce')!;
  const ok = await api(d.url, 'GET', path, {
    headers: {
      authorization: `DPoP ${at}`,
      dpop: await proof(k, 'GET', `${d.url}${path}`, { claims: { ath: ath(at), nonce: next } }),
    },
  });
  t.is(ok.status, 200);
});

test('token exchange: a DPoP-bound subject token is exchanged only with a proof of its key', async (t) => {
  const k = await proofKey();
  const htu = `${d.url}/token`;
  const subject = await token({ grant_type: 'client_credentials' }, { basic: svc, dpop: await proof(k, 'POST', htu) });
  t.is(subject.body.token_type, 'DPoP');
  const ex = async (dpop?: string) =>
    token(
      { grant_type: TE_GRANT, subject_token: subject.body.access_token, subject_token_type: AT },
      { basic: svc, dpop },
    );
  const none = await ex();
  t.is(none.status, 400);
  t.regex(none.body.error_description, /DPoP-bound/);
  t.is((await ex(await proof(await proofKey(), 'POST', htu))).body.error, 'invalid_request');
  const good = await ex(await proof(k, 'POST', htu));
  t.is(good.status, 200, JSON.stringify(good.body));
  t.is(good.body.token_type, 'DPoP');
  t.deepEqual(decodeJwt(good.body.access_token).cnf, { jkt: await thumbprint(k) });
});

test('iam tenants dpop set and show; no flag is a usage error, a stale --if-match is refused', async (t) => {
  const set = await iam(db, ['tenants', 'dpop', 'set', '--tenant', cliTenant, '--require-nonce', '--json']);
  t.is(set.code, 0, set.stderr);
  t.deepEqual(JSON.parse(set.stdout).policy, { requireNonce: true });
  const show = await iam(db, ['tenants', 'dpop', 'show', '--tenant', cliTenant]);
  t.regex(show.stdout, /require nonce: +yes/);
  t.regex(show.stdout, /require DPoP: +no/);
  t.is((await iam(db, ['tenants', 'dpop', 'set', '--tenant', cliTenant])).code, 2);
  const stale = await iam(db, ['tenants', 'dpop', 'set', '--tenant', cliTenant, '--require-dpop', '--if-match', '"x"']);
  t.is(stale.code, 1);
  t.regex(stale.stderr, /precondition_failed|If-Match/);
  // Audited, naming the CLI as the actor, once: the refused change wrote nothing.
  const audited = (await sql(
    db.url,
    db.dir,
    "SELECT actor_type FROM audit_events WHERE action = 'tenant.dpop_policy.update' AND tenant_id = ?",
    [cliTenant],
  )) as { actor_type: string }[];
  t.deepEqual(
    audited.map((r) => r.actor_type),
    ['cli'],
  );
});
