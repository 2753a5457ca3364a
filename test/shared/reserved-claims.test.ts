/**
 * Every claim the service itself emits is reserved: no custom claim schema may take its name
 * (shared/schemas/claims.ts, RESERVED_CLAIM_NAMES; docs/claims.md). A custom claim named
 * `agent_grant_id` or `resource` would otherwise be read by a resource server as the service's
 * own statement. The list is checked against what the service really emits: this test runs
 * the code flow (access token, ID token, UserInfo, introspection), a refresh, a
 * client_credentials token, a token exchange with an actor and a resource, and a token bound
 * to an agent grant, and collects every member name; each must be reserved.
 */
import test from 'ava';
import { decodeJwt } from 'jose';
import { isReservedClaimName } from '../../shared/schemas/claims.js';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken, introspectAs, openServices } from '../helpers/seed.js';
import { loginKit, type ClientCreds } from '../helpers/login.js';
import { authorizeUrl, get, pkce, REDIRECT, type App } from '../helpers/oauth.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';
import { AT, exchange, putSettings, TE_GRANT } from '../helpers/token-exchange.js';
import { agentSetup, agentToken, grantBody } from '../helpers/agents.js';
import { api as apiCall } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let api: ClientCreds;
let admin: string;
let web: ClientCreds;
let svc: ClientCreds;

const API = 'https://api.example.test';
const DOWNSTREAM = 'https://downstream.example.test';

const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  ({ db, d, app, sink, api } = await startLoginEnv());
  const actor = { type: 'system' as const, id: 'test' };
  const { ds, directory } = await openServices(db.url, db.dir);
  const mk = async (input: Parameters<typeof directory.createClient>[1]) => {
    const c = await directory.createClient(app.tenantId, input, actor);
    return { clientId: c.client.client_id, secret: c.client_secret! };
  };
  web = await mk({
    name: 'Web (exchange)',
    redirect_uris: [REDIRECT],
    first_party: true,
    grant_types: ['authorization_code', 'refresh_token', TE_GRANT],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    audiences: [API],
  });
  svc = await mk({
    name: 'Service',
    grant_types: ['client_credentials', TE_GRANT],
    scopes: ['openid', 'email', 'svc'],
    audiences: [DOWNSTREAM],
    resource_identifiers: [API],
  });
  await ds.destroy();
  admin = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  await putSettings(d.url, admin, {
    enabled: true,
    allowedSubjectTokenTypes: ['access_token', 'id_token'],
    maxResourceParams: 3,
    maxAudienceParams: 2,
  });
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

test('custom claims may not take a name the service emits: agent_grant_id, agent_grant_gen, resource, …', async (t) => {
  for (const key of ['agent_grant_id', 'agent_grant_gen', 'resource', 'active', 'token_type']) {
    const r = await apiCall(d.url, 'POST', '/api/admin/custom-claims', {
      token: admin,
      body: {
        field_key: key,
        display_label: key,
        field_type: 'string',
      },
    });
    t.is(r.status, 400, key);
    t.is(r.body.error, 'reserved_claim_key', key);
  }
});

test('every member of every token, UserInfo and introspection answer the service gives is a reserved name', async (t) => {
  const seen = new Map<string, string>();
  const collect = (where: string, o: Record<string, unknown>) => {
    for (const k of Object.keys(o)) if (!seen.has(k)) seen.set(k, where);
  };
  const introspected = async (where: string, token: string) => {
    const r = await introspectAs(d.url, api, token);
    t.is(r.body.active, true, `${where} is active`);
    collect(`introspection of ${where}`, r.body);
  };

  // The code flow, with every scope the client has.
  const email = `reserved-${Date.now()}@example.com`;
  const { ds, directory } = await openServices(db.url, db.dir);
  await directory.createUser(app.tenantId, { email, name: 'Reserved' }, { type: 'system', id: 'test' });
  await ds.destroy();
  const jar = await kit.signIn(web.clientId, email);
  const p = pkce();
  const r = await get(
    authorizeUrl(
      d.url,
      kit.authParams(web.clientId, p.challenge, { prompt: 'none', scope: 'openid profile email offline_access' }),
    ),
    jar,
  );
  const code = new URL(r.headers.get('location')!).searchParams.get('code')!;
  const tk = await kit.redeem(code, p.verifier, web);
  t.is(tk.status, 200);
  collect('access token', decodeJwt(tk.body.access_token));
  collect('ID token', decodeJwt(tk.body.id_token));
  collect('UserInfo', (await (await kit.userinfo(tk.body.access_token)).json()) as Record<string, unknown>);
  await introspected('the access token', tk.body.access_token);
  const refreshed = await kit.refresh(tk.body.refresh_token, web);
  t.is(refreshed.status, 200);
  collect('refreshed access token', decodeJwt(refreshed.body.access_token));

  // client_credentials.
  const cc = await clientCredentialsToken(d.url, svc.clientId, svc.secret);
  collect('client_credentials token', decodeJwt(cc));
  await introspected('the client_credentials token', cc);

  // RFC 8693: the service exchanges the user's token for one to the downstream API, as its actor.
  const x = await exchange(d.url, svc, {
    subject_token: tk.body.access_token,
    subject_token_type: AT,
    actor_token: cc,
    actor_token_type: AT,
    resource: DOWNSTREAM,
    scope: 'openid email',
  });
  t.is(x.status, 200, JSON.stringify(x.body));
  const exchanged = String(x.body.access_token);
  collect('exchanged token', decodeJwt(exchanged));
  t.truthy(decodeJwt(exchanged).act, 'the exchange carries act');
  t.truthy(decodeJwt(exchanged).resource, 'the exchange carries resource');

  // A token bound to an agent grant.
  const a = await agentSetup(db.url, db.dir, app.tenantId);
  const g = await apiCall(d.url, 'POST', '/api/admin/agent-grants', { token: admin, body: grantBody(a) });
  t.is(g.status, 201, JSON.stringify(g.body));
  const bound = await agentToken(d.url, a.agent, String(g.body.grant_id));
  t.is(bound.status, 200, JSON.stringify(bound.body));
  const agentClaims = decodeJwt(String(bound.body.access_token));
  t.truthy(agentClaims.agent_grant_id, 'the bound token carries its grant');
  collect('agent-grant token', agentClaims);

  const unreserved = [...seen].filter(([k]) => !isReservedClaimName(k)).map(([k, where]) => `${k} (${where})`);
  t.deepEqual(unreserved, [], 'names the service emits that a custom claim could still take');
  t.true(seen.size >= 20, `the walk saw the service's claims (${seen.size})`);
});
