/**
 * Delegation (RFC 8693 §4.1, §4.4): a depth-2 `act` chain (service B acting for a user on
 * behalf of service A) shown by introspection and in the audit log; `may_act` in a subject
 * token (an ID-JAG from a trusted issuer) honoured, and required by tenant policy; RFC 9396
 * authorization_details that may only narrow. One daemon, one loopback HTTPS issuer.
 */
import test from 'ava';
import { rmSync } from 'node:fs';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken, introspectAs, openServices, activeTenant } from '../helpers/seed.js';
import { loginKit, type ClientCreds } from '../helpers/login.js';
import { REDIRECT } from '../helpers/oauth.js';
import { api } from '../helpers/api.js';
import { makeCert, startIssuer, type TestCert, type TestIssuer } from '../helpers/https-issuer.js';
import { AT, claimsOf, exchange, JAG, putSettings, TE_GRANT } from '../helpers/token-exchange.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { narrowDetails } from '../../shared/services/grants/delegation.js';
import { agentToken, grantBody, type AgentSetup } from '../helpers/agents.js';

const API_A = 'https://api-a.example.test';
const API_B = 'https://api-b.example.test';
const API_C = 'https://api-c.example.test';
const CHAT = 'https://chat.example.test/api';

let db: TestDb;
let d: Daemon;
let sink: SmtpSink;
let cert: TestCert;
let idp: TestIssuer;
let tenantId: string;
let web: ClientCreds;
let svcA: ClientCreds; // resource server of API A, calls API B
let svcB: ClientCreds; // resource server of API B, calls API C
let rsC: ClientCreds; // resource server of API C: introspects
let agent: ClientCreds; // redeems ID-JAGs, acts with its own token
let admin: string;
let ag: AgentSetup; // an agent with the token-exchange grant, for an agent grant
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  cert = makeCert();
  idp = await startIssuer({ cert });
  db = await createTestDatabase();
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  tenantId = (await activeTenant(provisioning, { name: 'Delegation tenant' }, actor)).id;
  const mk = async (input: Parameters<typeof directory.createClient>[1]) => {
    const c = await directory.createClient(tenantId, input, actor);
    return { clientId: c.client.client_id, secret: c.client_secret! };
  };
  web = await mk({
    name: 'Web',
    redirect_uris: [REDIRECT],
    first_party: true,
    grant_types: ['authorization_code'],
    scopes: ['openid', 'email'],
    audiences: [API_A],
  });
  const svc = (name: string, rid: string, aud: string[]) =>
    mk({
      name,
      grant_types: ['client_credentials', TE_GRANT],
      scopes: ['openid', 'email'],
      audiences: aud,
      resource_identifiers: [rid],
    });
  svcA = await svc('Service A', API_A, [API_B]);
  svcB = await svc('Service B', API_B, [API_C]);
  rsC = await mk({ name: 'API C', grant_types: ['client_credentials'], scopes: [], resource_identifiers: [API_C] });
  agent = await mk({
    name: 'Agent',
    grant_types: ['client_credentials', TE_GRANT],
    scopes: ['chat.read'],
    audiences: [CHAT],
  });
  const adm = await mk({ name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] });
  const user = await directory.createUser(tenantId, { email: 'dana@example.test', name: 'Dana' }, actor);
  ag = {
    agent: await mk({ name: 'tool agent', grant_types: ['client_credentials', TE_GRANT], scopes: ['tools'] }),
    machine: await mk({ name: 'machine', grant_types: ['client_credentials'], scopes: ['tools'] }),
    grantor: (await directory.createUser(tenantId, { email: 'g@example.test', name: 'G' }, actor)).id,
    delegator: (await directory.createUser(tenantId, { email: 'dl@example.test', name: 'D' }, actor)).id,
  };
  t0user = user.id;
  await ds.destroy();
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, {
    IAM_SMTP_URL: sink.url,
    IAM_OUTBOUND_ALLOW_LOOPBACK: 'true',
    IAM_OUTBOUND_CA_FILE: cert.certFile,
  });
  admin = await clientCredentialsToken(d.url, adm.clientId, adm.secret);
  await putSettings(d.url, admin, {
    enabled: true,
    allowedSubjectTokenTypes: ['access_token', 'id-jag'],
    idJag: { enabled: true, allowedIssuers: [idp.issuer] },
  });
});
let t0user = '';
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await idp?.close();
  await db?.drop();
  if (cert) rmSync(cert.dir, { recursive: true, force: true });
});

const cc = (c: ClientCreds) => clientCredentialsToken(d.url, c.clientId, c.secret);

test.serial(
  'a depth-2 act chain: B acts for the user on behalf of A, in introspection and the audit log',
  async (t) => {
    const user = await kit.tokensFor(web, 'dana@example.test');
    const first = await exchange(d.url, svcA, {
      subject_token: user.access_token,
      subject_token_type: AT,
      actor_token: await cc(svcA),
      actor_token_type: AT,
      resource: API_B,
    });
    t.is(first.status, 200, JSON.stringify(first.body));
    const second = await exchange(d.url, svcB, {
      subject_token: String(first.body.access_token),
      subject_token_type: AT,
      actor_token: await cc(svcB),
      actor_token_type: AT,
      resource: API_C,
    });
    t.is(second.status, 200, JSON.stringify(second.body));
    const chain = { sub: svcB.clientId, act: { sub: svcA.clientId } };
    const c = claimsOf(second.body.access_token);
    t.is(c.sub, t0user);
    t.deepEqual(c.act, chain, 'RFC 8693 §4.1: the current actor outermost');

    const seen = await introspectAs(d.url, rsC, String(second.body.access_token));
    t.true(seen.body.active);
    t.deepEqual(seen.body.act, chain, 'introspection shows the chain');

    const events = await api(d.url, 'GET', `/api/admin/audit?action=token.exchange&target_id=${c.jti}`, {
      token: admin,
    });
    const e = (events.body.events as Record<string, any>[])[0];
    t.truthy(e, JSON.stringify(events.body));
    t.is(e.actor_id, svcB.clientId);
    t.is(e.summary.sub, t0user);
    t.deepEqual(e.summary.act, chain);
    t.deepEqual(e.summary.aud, [API_C]);
    t.false(JSON.stringify(e).includes(String(second.body.access_token)), 'no token value');
  },
);

const jagWith = (extra: Record<string, unknown> = {}) =>
  idp.sign({ clientId: agent.clientId, audience: d.url, scope: 'chat.read', resource: CHAT, extra });

test.serial('may_act in the subject token names the only actor; requireMayAct refuses its absence', async (t) => {
  const actorToken = await cc(agent);
  const withActor = (subject: string) =>
    exchange(d.url, agent, {
      subject_token: subject,
      subject_token_type: JAG,
      actor_token: actorToken,
      actor_token_type: AT,
    });
  const someoneElse = await withActor(await jagWith({ may_act: { sub: svcA.clientId } }));
  t.is(someoneElse.body.error, 'invalid_request');
  t.regex(String(someoneElse.body.error_description), /may_act/);
  const wrongIss = await withActor(await jagWith({ may_act: { sub: agent.clientId, iss: idp.issuer } }));
  t.is(wrongIss.body.error, 'invalid_request', 'actor tokens are ours: may_act.iss must be this issuer');
  const named = await withActor(await jagWith({ may_act: { sub: agent.clientId, iss: d.url } }));
  t.is(named.status, 200, JSON.stringify(named.body));
  t.deepEqual(claimsOf(named.body.access_token).act, { sub: agent.clientId });

  // Without an actor, may_act stays on the issued token for the next exchange.
  const kept = await exchange(d.url, agent, {
    subject_token: await jagWith({ may_act: { sub: agent.clientId } }),
    subject_token_type: JAG,
  });
  t.deepEqual(claimsOf(kept.body.access_token).may_act, { sub: agent.clientId });

  await putSettings(d.url, admin, { requireMayAct: true });
  try {
    const none = await withActor(await jagWith());
    t.is(none.body.error, 'invalid_request');
    t.regex(String(none.body.error_description), /requires the subject_token to name its actor/);
    const ok = await withActor(await jagWith({ may_act: { sub: agent.clientId } }));
    t.is(ok.status, 200, JSON.stringify(ok.body));
  } finally {
    await putSettings(d.url, admin, { requireMayAct: false });
  }
});

test('authorization_details ride along and may only narrow (RFC 9396)', (t) => {
  const subject = {
    sub: 'c1',
    scopeCeiling: [],
    authorizationDetails: [{ type: 'docs', actions: ['read', 'write'], locations: ['https://docs.example.test'] }],
  };
  t.deepEqual(narrowDetails(subject, undefined), subject.authorizationDetails, 'carried as they are');
  const narrower = [{ type: 'docs', actions: ['read'], locations: ['https://docs.example.test'] }];
  t.deepEqual(narrowDetails(subject, JSON.stringify(narrower)), narrower);
  const wider = (v: unknown) => t.throws(() => narrowDetails(subject, JSON.stringify(v)));
  t.is(
    wider([{ type: 'docs', actions: ['read', 'delete'], locations: ['https://docs.example.test'] }])?.message.includes(
      'actions',
    ),
    true,
  );
  t.is((wider([{ type: 'mail', actions: ['send'] }]) as any).error, 'invalid_authorization_details');
  wider([{ type: 'docs', actions: ['read'] }]); // dropping `locations` would read as "anywhere"
  wider('not an array');
  t.is(
    t.throws<Error & { error: string }>(() => narrowDetails({ sub: 'u', scopeCeiling: [] }, JSON.stringify(narrower)))
      ?.error,
    'invalid_authorization_details',
    'nothing to narrow',
  );
});

test.serial('an agent grant token exchanged: its authorization_details ride along, narrow, never widen', async (t) => {
  const created = await api(d.url, 'POST', '/api/admin/agent-grants', {
    token: admin,
    body: grantBody(ag, { authorization_details: [{ type: 'docs', actions: ['read', 'write'] }] }),
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const grantId = String(created.body.grant_id);
  const tok = await agentToken(d.url, ag.agent, grantId);
  t.is(tok.status, 200, JSON.stringify(tok.body));
  const swap = (extra: Record<string, string> = {}) =>
    exchange(d.url, ag.agent, { subject_token: String(tok.body.access_token), subject_token_type: AT, ...extra });

  const carried = claimsOf((await swap()).body.access_token);
  t.deepEqual(carried.authorization_details, [{ type: 'docs', actions: ['read', 'write'] }]);
  t.is(carried.agent_grant_id, grantId, 'still bound to the grant');

  const narrowed = await swap({ authorization_details: JSON.stringify([{ type: 'docs', actions: ['read'] }]) });
  t.is(narrowed.status, 200, JSON.stringify(narrowed.body));
  t.deepEqual(claimsOf(narrowed.body.access_token).authorization_details, [{ type: 'docs', actions: ['read'] }]);

  const wider = await swap({ authorization_details: JSON.stringify([{ type: 'mail', actions: ['send'] }]) });
  t.is(wider.status, 400);
  t.is(wider.body.error, 'invalid_authorization_details');

  // Revoking the grant ends the exchanged token too (introspection checks the grant).
  const revoked = await api(d.url, 'POST', `/api/admin/agent-grants/${grantId}/revoke`, { token: admin });
  t.true(revoked.status < 300, JSON.stringify(revoked.body));
  const seen = await introspectAs(d.url, ag.agent, String(narrowed.body.access_token));
  t.false(seen.body.active);
});
