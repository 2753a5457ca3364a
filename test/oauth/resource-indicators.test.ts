/**
 * RFC 8707 at every token request (docs/oauth.md, "Resource indicators"): one rule
 * (shared/services/resource-indicators.ts) at /authorize and at /token's authorization_code,
 * refresh_token, client_credentials and token exchange grants. A client with no registered
 * audiences (as dynamically registered and metadata-document clients are) may name any
 * registered resource server of its own tenant; one with audiences only those; anything else
 * is invalid_target. The access token's `aud` is exactly the resources asked for; a refresh
 * may narrow them. One daemon for the file.
 */
import test from 'ava';
import { decodeJwt } from 'jose';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { loginKit, type ClientCreds } from '../helpers/login.js';
import { authorizeUrl, get, pkce } from '../helpers/oauth.js';
import { activeTenant, clientCredentialsToken, credentialsClient, openServices } from '../helpers/seed.js';
import { AT, exchange, putSettings, TE_GRANT } from '../helpers/token-exchange.js';

const R1 = 'https://api.example.test'; // TEST_API, the environment's resource server
const R2 = 'https://mcp.example.test/mcp';
const UNKNOWN = 'https://unknown.example.test';
const OTHER_TENANTS = 'https://other-tenant.example.test';
const DISABLED = 'https://disabled-api.example.test';

let env: LoginEnv;
let agent: ClientCreds; // first party, no audiences: any registered resource server of its tenant
let worker: ClientCreds; // client_credentials, no audiences
let bound: ClientCreds; // client_credentials, audiences [R1]
let mcp: ClientCreds; // the resource server R2, may exchange tokens addressed to it

const kit = loginKit(
  () => env.d.url,
  () => env.sink,
);
const aud = (token: string) => [decodeJwt(token).aud].flat();
const basic = (c: ClientCreds) => 'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64');
async function token(c: ClientCreds, params: Record<string, string | string[]>) {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of [v].flat()) body.append(k, x);
  const res = await fetch(`${env.d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c) },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

test.before(async () => {
  env = await startLoginEnv();
  const { ds, directory, provisioning } = await openServices(env.db.url, env.db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const tid = env.app.tenantId;
  const c = await directory.createClient(
    tid,
    {
      name: 'Agent',
      redirect_uris: ['https://rp.example.test/callback'],
      first_party: true,
      scopes: ['openid', 'email', 'offline_access'],
    },
    actor,
  );
  agent = { clientId: c.client.client_id, secret: c.client_secret! };
  worker = await credentialsClient(directory, tid, { name: 'Worker', scopes: ['jobs'] });
  bound = await credentialsClient(directory, tid, { name: 'Bound', scopes: ['jobs'], audiences: [R1] });
  mcp = await credentialsClient(directory, tid, {
    name: 'MCP server',
    grant_types: ['client_credentials', TE_GRANT],
    scopes: ['openid', 'email'],
    resource_identifiers: [R2],
  });
  // Another tenant's resource server: not one this tenant's clients may name.
  const other = await activeTenant(provisioning, { name: 'Other' }, actor);
  await credentialsClient(directory, other.id, { name: 'Other API', resource_identifiers: [OTHER_TENANTS] });
  // A disabled resource server serves nothing: not a target either.
  const off = await credentialsClient(directory, tid, { name: 'Disabled API', resource_identifiers: [DISABLED] });
  await ds.query("UPDATE clients SET status = 'disabled' WHERE client_id = ?", [off.clientId]);
  await ds.destroy();
});
test.after.always(() => stopLoginEnv(env));

test('authorize: an unregistered resource, or another tenant’s, is invalid_target redirected with state and iss', async (t) => {
  const user = await createUserIn(env, 'ri-authz');
  const jar = await kit.signIn(agent.clientId, user.email);
  for (const resource of [UNKNOWN, OTHER_TENANTS, `${R1}#frag`]) {
    const p = pkce();
    const r = await get(
      authorizeUrl(env.d.url, kit.authParams(agent.clientId, p.challenge, { prompt: 'none', resource })),
      jar,
    );
    const loc = new URL(r.headers.get('location')!);
    t.is(loc.searchParams.get('error'), 'invalid_target', resource);
    t.is(loc.searchParams.get('state'), 's1');
    t.truthy(loc.searchParams.get('iss'));
  }
});

test('authorization code: aud is exactly the resources asked for; a token request may narrow, never add', async (t) => {
  const user = await createUserIn(env, 'ri-code');
  const jar = await kit.signIn(agent.clientId, user.email);
  const p = pkce();
  const u = new URL(
    authorizeUrl(
      env.d.url,
      kit.authParams(agent.clientId, p.challenge, { prompt: 'none', scope: 'openid email offline_access' }),
    ),
  );
  u.searchParams.append('resource', R1);
  u.searchParams.append('resource', R2);
  const r = await get(u.toString(), jar);
  const code = new URL(r.headers.get('location')!).searchParams.get('code');
  t.truthy(code, r.headers.get('location') ?? '');
  const redeem = { grant_type: 'authorization_code', code: code!, redirect_uri: 'https://rp.example.test/callback' };
  // A resource the authorization request did not name (even a registered one) is refused.
  const outside = await token(agent, { ...redeem, code_verifier: p.verifier, resource: UNKNOWN });
  t.is(outside.status, 400);
  t.is(outside.body.error, 'invalid_target');
  // A fresh authorization naming both, redeemed without narrowing.
  const p2 = pkce();
  const again = new URL(
    authorizeUrl(
      env.d.url,
      kit.authParams(agent.clientId, p2.challenge, { prompt: 'none', scope: 'openid email offline_access' }),
    ),
  );
  again.searchParams.append('resource', R1);
  again.searchParams.append('resource', R2);
  const code2 = new URL((await get(again.toString(), jar)).headers.get('location')!).searchParams.get('code')!;
  const full = await token(agent, { ...redeem, code: code2, code_verifier: p2.verifier });
  t.is(full.status, 200, JSON.stringify(full.body));
  t.deepEqual(aud(full.body.access_token).sort(), [R1, R2].sort());
  t.deepEqual(aud(full.body.id_token), [agent.clientId], 'the ID token is for the client, always');
  // Refresh: narrowed to R2; a resource outside the grant is refused.
  const narrowed = await token(agent, {
    grant_type: 'refresh_token',
    refresh_token: full.body.refresh_token,
    resource: R2,
  });
  t.is(narrowed.status, 200, JSON.stringify(narrowed.body));
  t.deepEqual(aud(narrowed.body.access_token), [R2]);
  const widened = await token(agent, {
    grant_type: 'refresh_token',
    refresh_token: narrowed.body.refresh_token,
    resource: UNKNOWN,
  });
  t.is(widened.body.error, 'invalid_target');
  const plain = await token(agent, { grant_type: 'refresh_token', refresh_token: narrowed.body.refresh_token });
  t.is(plain.status, 200, JSON.stringify(plain.body));
  t.deepEqual(aud(plain.body.access_token).sort(), [R1, R2].sort(), 'without resource: what was granted');
});

test('authorization code without resource at /authorize: the token request may name a registered resource server', async (t) => {
  const user = await createUserIn(env, 'ri-late');
  const jar = await kit.signIn(agent.clientId, user.email);
  const a = await kit.codeFor(jar, agent.clientId);
  const none = await kit.redeem(a.code, a.verifier, agent);
  t.is(none.status, 200);
  t.deepEqual(aud(none.body.access_token), [env.d.url.replace(/\/$/, '')], 'no resource at all: the issuer, as before');
  const b = await kit.codeFor(jar, agent.clientId);
  const redeem = { grant_type: 'authorization_code', redirect_uri: 'https://rp.example.test/callback' };
  const unknown = await token(agent, { ...redeem, code: b.code, code_verifier: b.verifier, resource: OTHER_TENANTS });
  t.is(unknown.body.error, 'invalid_target');
  const c = await kit.codeFor(jar, agent.clientId);
  const ok = await token(agent, { ...redeem, code: c.code, code_verifier: c.verifier, resource: R2 });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(aud(ok.body.access_token), [R2]);
});

test('client credentials: a client without audiences may name its tenant’s resource servers; aud is exactly them', async (t) => {
  const ok = await token(worker, { grant_type: 'client_credentials', resource: R2 });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(aud(ok.body.access_token), [R2], 'not the issuer too');
  for (const resource of [UNKNOWN, OTHER_TENANTS, DISABLED]) {
    const r = await token(worker, { grant_type: 'client_credentials', resource });
    t.is(r.status, 400);
    t.is(r.body.error, 'invalid_target', resource);
  }
  // A client with registered audiences keeps to them, even for a registered resource server.
  const outside = await token(bound, { grant_type: 'client_credentials', resource: R2 });
  t.is(outside.body.error, 'invalid_target');
  const inside = await token(bound, { grant_type: 'client_credentials', resource: R1 });
  t.deepEqual(aud(inside.body.access_token), [R1]);
});

test('token exchange: the resource passes the same rule; aud is exactly it', async (t) => {
  const admin = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
  await putSettings(env.d.url, admin, { enabled: true, allowedSubjectTokenTypes: ['access_token'] });
  // A user's access token addressed to the MCP server, which exchanges it for one to R1.
  const user = await createUserIn(env, 'ri-tx');
  const jar = await kit.signIn(agent.clientId, user.email);
  const c = await kit.codeFor(jar, agent.clientId);
  const subject = await token(agent, {
    grant_type: 'authorization_code',
    redirect_uri: 'https://rp.example.test/callback',
    code: c.code,
    code_verifier: c.verifier,
    resource: R2,
  });
  t.is(subject.status, 200, JSON.stringify(subject.body));
  const base = { subject_token: subject.body.access_token, subject_token_type: AT, scope: 'openid email' };
  const ok = await exchange(env.d.url, mcp, { ...base, resource: R1 });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(aud(String(ok.body.access_token)), [R1]);
  for (const resource of [UNKNOWN, OTHER_TENANTS]) {
    const r = await exchange(env.d.url, mcp, { ...base, resource });
    t.is(r.status, 400);
    t.is(r.body.error, 'invalid_target', resource);
  }
});
