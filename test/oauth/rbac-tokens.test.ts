/**
 * Permissions in tokens (docs/rbac.md), with openid-client as the relying party: RFC 8707
 * resource indicators on the authorization and token requests, governed scopes granted by the
 * roles a user holds through a group (left out of `scope` otherwise, RFC 6749 §3.3), the
 * consent page listing only what will be granted, a refresh after a removed membership,
 * machine-to-machine RBAC, introspection's `scope`, and the `roles` and `groups` claims only
 * where bound. The RBAC tables are seeded with SQL (test/helpers/rbac.ts); the user leaves the
 * group through SCIM (PATCH /scim/v2/Groups, as Entra ID sends it).
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { createUserIn, introspectAs, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import {
  authorizeUrl,
  challengeFrom,
  codeFrom,
  CookieJar,
  csrfFrom,
  get,
  postJson,
  REDIRECT,
  sql,
} from '../helpers/oauth.js';
import { api } from '../helpers/api.js';
import { clientCredentialsToken, credentialsClient, openServices } from '../helpers/seed.js';
import { SCOPE_SCIM } from '../../shared/scopes.js';
import { seedRbac } from '../helpers/rbac.js';

/** The API the env's resource server serves, and a second resource of the tenant. */
const R = 'https://api.example.test';
const R2 = 'https://billing.example.test';

let env: LoginEnv;
let rp: { clientId: string; secret: string };
let m2m: { clientId: string; secret: string };
let idp: { clientId: string; secret: string };
let user: { id: string; email: string };
let accounting: string;

test.before(async () => {
  env = await startLoginEnv();
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const c = await directory.createClient(
    env.app.tenantId,
    {
      name: 'Invoices app',
      redirect_uris: [REDIRECT],
      first_party: false,
      scopes: ['openid', 'invoices:read', 'invoices:write', 'roles', 'groups'],
      audiences: [R, R2],
    },
    actor,
  );
  rp = { clientId: c.client.client_id, secret: c.client_secret! };
  idp = await credentialsClient(directory, env.app.tenantId, { name: 'Entra ID', scopes: [SCOPE_SCIM] });
  m2m = await credentialsClient(directory, env.app.tenantId, {
    name: 'Billing worker',
    scopes: ['invoices:read', 'invoices:write'],
    audiences: [R],
  });
  await ds.destroy();
  user = await createUserIn(env, 'rbac');
  ({
    groups: { Accounting: accounting },
  } = await seedRbac(env.db, env.app.tenantId, {
    permissions: { [R]: ['invoices:read', 'invoices:write'], [R2]: ['invoices:read'] },
    groups: { Accounting: [user.id] },
    roles: [
      {
        name: 'Invoice reader',
        resource: R,
        permissions: [{ resource: R, permission: 'invoices:read' }],
        groups: ['Accounting'],
      },
      // The worker holds write on R, and read only on R2: a token for R gets write alone.
      {
        name: 'Billing writer',
        resource: R,
        permissions: [{ resource: R, permission: 'invoices:write' }],
        clients: [m2m.clientId],
      },
      {
        name: 'Billing reader',
        resource: R2,
        permissions: [{ resource: R2, permission: 'invoices:read' }],
        clients: [m2m.clientId],
      },
    ],
  }));
});
test.after.always(() => stopLoginEnv(env));

async function relyingParty() {
  return oidc.discovery(
    new URL(env.d.url),
    rp.clientId,
    { redirect_uris: [REDIRECT] },
    oidc.ClientSecretBasic(rp.secret),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
}

async function postForm(path: string, body: Record<string, string>, jar: CookieJar): Promise<Response> {
  const res = await fetch(`${env.d.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams(body),
  });
  jar.take(res);
  return res;
}

test.serial(
  'a group role grants invoices:read on R and nothing else; consent lists only it; ' +
    'the next refresh after SCIM removes the user from the group lacks it',
  async (t) => {
    const config = await relyingParty();
    const checks = { verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), state: oidc.randomState() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid invoices:read invoices:write roles',
      resource: R,
      nonce: checks.nonce,
      state: checks.state,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.verifier),
      code_challenge_method: 'S256',
    });
    const jar = new CookieJar();
    const page = await get(url.toString(), jar);
    t.is(page.status, 200);
    const challenge = challengeFrom(await page.text());
    const direct = `${env.d.url}/api/v1/auth/direct/email-code`;
    const body = { client_id: rp.clientId, email: user.email, authorization_challenge_id: challenge };
    const earlier = new Set(env.sink.messages);
    t.is((await postJson(`${direct}/send`, body, jar)).status, 200);
    const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
    const verify = await postJson(`${direct}/verify`, { ...body, code: codeFrom(mail.text) }, jar);
    const { redirect_url } = (await verify.json()) as { redirect_url: string };
    t.is(new URL(redirect_url).searchParams.get('resource'), R, 'the continuation keeps the resource');

    // The consent page lists what will be granted: invoices:write, which no role gives, is not asked.
    const consent = await get(redirect_url, jar);
    t.is(consent.status, 200);
    const html = await consent.text();
    t.regex(html, /invoices:read/);
    t.notRegex(html, /invoices:write/);
    const allowed = await postForm(
      '/authorize/consent',
      { challenge: challengeFrom(html), csrf: csrfFrom(html), decision: 'allow' },
      jar,
    );
    t.is(allowed.status, 302);
    const recorded = (await sql(
      env.db.url,
      env.db.dir,
      'SELECT scopes FROM consents WHERE user_id = ? AND client_id = ?',
      [user.id, rp.clientId],
    )) as { scopes: string }[];
    t.notRegex(String(recorded[0]?.scopes), /invoices:write/, 'the consent records only what was granted');
    t.regex(String(recorded[0]?.scopes), /invoices:read/);

    const tokens = await oidc.authorizationCodeGrant(config, new URL(allowed.headers.get('location')!), {
      pkceCodeVerifier: checks.verifier,
      expectedNonce: checks.nonce,
      expectedState: checks.state,
      idTokenExpected: true,
    });
    t.is(tokens.scope, 'openid invoices:read roles');
    const jwks = createRemoteJWKSet(new URL(`${env.d.url}/jwks`));
    const at = (await jwtVerify(tokens.access_token, jwks, { issuer: env.d.url, typ: 'at+jwt', audience: R })).payload;
    t.is(at.aud, R);
    t.is(at.scope, 'openid invoices:read roles');
    // `roles` is bound (scope roles was granted), `groups` is not (scope groups was not asked).
    t.deepEqual(at.roles, ['Invoice reader']);
    t.is(at.groups, undefined);
    t.deepEqual(tokens.claims()!.roles, ['Invoice reader']);
    t.is(tokens.claims()!.groups, undefined);
    t.deepEqual((await oidc.fetchUserInfo(config, tokens.access_token, user.id)).roles, ['Invoice reader']);
    t.is((await introspectAs(env, tokens.access_token)).scope, 'openid invoices:read roles');

    // RFC 8707 §2.2: a resource the grant did not cover is invalid_target at the token endpoint.
    const wider = await t.throwsAsync(() => oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: R2 }));
    t.is((wider as { error?: string }).error, 'invalid_target');

    // Out of the group through SCIM, as Entra ID sends it (RFC 7644 §3.5.2.2, a value array):
    // the next refresh is recomputed without the permission (nothing revoked).
    const removed = await api(env.d.url, 'PATCH', `/scim/v2/Groups/${accounting}`, {
      token: await clientCredentialsToken(env.d.url, idp.clientId, idp.secret, SCOPE_SCIM),
      headers: { 'content-type': 'application/scim+json' },
      raw: JSON.stringify({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'Remove', path: 'members', value: [{ value: user.id }] }],
      }),
    });
    t.true(removed.status === 200 || removed.status === 204, `SCIM PATCH: ${removed.status}`);
    const left = await sql(env.db.url, env.db.dir, 'SELECT user_id FROM group_members WHERE group_id = ?', [
      accounting,
    ]);
    t.deepEqual(left, [], 'the SCIM PATCH removed the membership');
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: R });
    t.is(refreshed.scope, 'openid roles');
    const next = decodeJwt(refreshed.access_token);
    t.is(next.scope, 'openid roles');
    t.deepEqual(next.roles, []);
    t.is((await introspectAs(env, refreshed.access_token)).scope, 'openid roles');
    t.is((await introspectAs(env, tokens.access_token)).active, true, 'the earlier token is not revoked');
  },
);

test('a resource outside the client audiences is invalid_target, redirected to the client', async (t) => {
  const res = await get(
    authorizeUrl(env.d.url, {
      response_type: 'code',
      client_id: rp.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid invoices:read',
      resource: 'https://elsewhere.example.test',
      state: 's1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }),
    new CookieJar(),
  );
  t.is(res.status, 302);
  const back = new URL(res.headers.get('location')!);
  t.is(`${back.origin}${back.pathname}`, REDIRECT);
  t.is(back.searchParams.get('error'), 'invalid_target');
  t.is(back.searchParams.get('state'), 's1');
});

test('client credentials: a role assigned to the client grants its permission for R, not another', async (t) => {
  const res = await fetch(`${env.d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${m2m.clientId}:${m2m.secret}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'invoices:read invoices:write', resource: R }),
  });
  const body = (await res.json()) as { access_token: string; scope: string };
  t.is(res.status, 200, JSON.stringify(body));
  // invoices:read is held only on R2 (Billing reader): not for a token to R.
  t.is(body.scope, 'invoices:write');
  const claims = decodeJwt(body.access_token);
  t.is(claims.scope, 'invoices:write');
  t.is(claims.roles, undefined);
  t.is((await introspectAs(env, body.access_token)).scope, 'invoices:write');
});
