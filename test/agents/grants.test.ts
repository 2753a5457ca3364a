/**
 * Agent grants: POST, GET, PATCH per the interface (bounds, immutable fields, the four
 * ceilings), the one-transaction effects (generation, consent, revocation outbox entry,
 * audit), tokens bound to a grant, and the outbox job revoking the older generation's token
 * families so introspection answers active: false. A refused PATCH changes nothing. A revoke
 * ends a grant for good: its tokens refused at once, at introspection and as a token exchange's
 * subject, no new one issued.
 */
import test from 'ava';
import { RbacTokens } from '../../shared/services/rbac-tokens.js';
import { decodeJwt } from 'jose';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, introspectAs, openServices, seed, type Seeded } from '../helpers/seed.js';
import { sql } from '../helpers/oauth.js';
import { agentSetup, agentToken, DAY, grantBody, sessionCookie, type AgentSetup } from '../helpers/agents.js';
import { api } from '../helpers/api.js';
import { AgentGrantService } from '../../shared/services/agents/grants.js';
import { Outbox } from '../../shared/services/outbox.js';
import { TEST_SECRET_KEY } from '../helpers/db.js';
import { purgeAuth } from '../../daemon/jobs/auth-purge.js';
import { GrantService, TokenParams, type GrantDeps } from '../../shared/services/grants/index.js';
import { KeyService } from '../../shared/services/keys.js';
import { TokenService } from '../../shared/services/tokens.js';
import type { Tx } from '../../shared/db/index.js';
import { until } from '../helpers/poll.js';
import { AT, exchange, putSettings, TE_GRANT } from '../helpers/token-exchange.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let a: AgentSetup;
let admin: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  a = await agentSetup(db.url, db.dir, s.tenantId);
  d = await startDaemon(db.url, db.dir);
  admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const create = async (extra: Record<string, unknown> = {}) => {
  const r = await api(d.url, 'POST', '/api/admin/agent-grants', { token: admin, body: grantBody(a, extra) });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.grant_id as string;
};
const patch = (id: string, body: unknown) =>
  api(d.url, 'PATCH', `/api/admin/agent-grants/${id}`, { token: admin, body });
const grantRow = async (id: string) =>
  ((await sql(db.url, db.dir, 'SELECT * FROM agent_grants WHERE id = ?', [id])) as Record<string, unknown>[])[0];
const rows = async (query: string, params: unknown[] = []) => (await sql(db.url, db.dir, query, params)) as unknown[];
const snapshot = async (id: string) => ({
  grant: await grantRow(id),
  consents: await rows('SELECT * FROM agent_grant_consents WHERE grant_id = ? ORDER BY consent_version', [id]),
  outbox: await rows("SELECT id FROM outbox WHERE kind = 'agent_grant.revoke_families'"),
  audit: await rows("SELECT id FROM audit_events WHERE action = 'agent_grant.update' AND target_id = ?", [id]),
});

test.serial('create and show: aag_ id, generation 1, consent_version 1, immutable terms kept', async (t) => {
  const r = await api(d.url, 'POST', '/api/admin/agent-grants', { token: admin, body: grantBody(a) });
  t.is(r.status, 201);
  t.regex(r.body.grant_id, /^aag_/);
  t.like(r.body, { status: 'active', generation: 1, consent_version: 1, consent_required: false, scopes: ['tools'] });
  const g = await api(d.url, 'GET', `/api/admin/agent-grants/${r.body.grant_id}`, { token: admin });
  t.is(g.status, 200);
  t.deepEqual(g.body.authorization_details, [{ type: 'docs', actions: ['read'] }]);
  t.deepEqual(g.body.task_set, ['summarise']);
  t.is((await api(d.url, 'GET', `/api/admin/agent-grants/${r.body.grant_id}`)).status, 401);
  t.is((await api(d.url, 'GET', '/api/admin/agent-grants/aag_unknown', { token: admin })).status, 404);
  t.is((await api(d.url, 'GET', '/api/admin/agent-grants/grant_1', { token: admin })).status, 400);
  // Creation is held to the ceilings too.
  const over = await api(d.url, 'POST', '/api/admin/agent-grants', {
    token: admin,
    body: grantBody(a, {
      authorization_details: [{ type: 'payments', actions: ['pay'] }],
    }),
  });
  t.is(over.status, 403);
  t.is(over.body.error, 'updater_ceiling_exceeded');
});

test.serial('PATCH bounds and immutable fields: 400 naming the field, nothing changed', async (t) => {
  const id = await create();
  const before = await snapshot(id);
  const detail = { type: 'docs', actions: ['read'] };
  const cases: [unknown, number, string | RegExp][] = [
    [{}, 400, /at least one/],
    [{ authorization_details: Array.from({ length: 21 }, () => detail) }, 400, /at most 20/],
    [{ authorization_details: [] }, 400, /authorization_details/],
    [{ authorization_details: [{ actions: ['read'] }] }, 400, /authorization_details\.0\.type/],
    [{ authorization_details: ['docs'] }, 400, /authorization_details\.0/],
    [{ purpose: 'p'.repeat(501) }, 400, /purpose: must be at most 500/],
    [{ purpose: 5 }, 400, /purpose/],
    [{ expires_at: Date.now() + 91 * DAY }, 400, /expires_at: must be at most 90 days/],
    [{ expires_at: Date.now() - 1000 }, 400, /expires_at: must be in the future/],
    [{ expires_at: 'tomorrow' }, 400, /expires_at/],
  ];
  for (const [body, status, re] of cases) {
    const r = await patch(id, body);
    t.is(r.status, status, JSON.stringify(body).slice(0, 60));
    t.regex(String(r.body.message), re as RegExp);
  }
  const far = await patch(id, { expires_at: Date.now() + 91 * DAY });
  t.is(far.body.error, 'expires_at_too_far');
  for (const k of ['task_set', 'scope_policy', 'resolved_tools', 'permissions', 'scopes']) {
    const r = await patch(id, { purpose: 'x', [k]: ['changed'] });
    t.is(r.status, 400, k);
    t.is(r.body.error, 'immutable_field', k);
    t.true(String(r.body.message).includes(`body.${k}`), k);
  }
  const badId = await patch('grant_1', { purpose: 'x' });
  t.is(badId.status, 400);
  t.is((await patch('aag_doesnotexist', { purpose: 'x' })).status, 404);
  t.is((await api(d.url, 'PATCH', `/api/admin/agent-grants/${id}`, { body: { purpose: 'x' } })).status, 401);
  t.deepEqual(await snapshot(id), before, 'no refused PATCH changed anything');
  // The limits themselves pass.
  const ok = await patch(id, {
    authorization_details: Array.from({ length: 20 }, () => detail),
    purpose: 'p'.repeat(500),
    expires_at: Date.now() + 90 * DAY - 60_000,
  });
  t.is(ok.status, 200);
});

test.serial('each ceiling refuses what exceeds it with its own code, and nothing changes', async (t) => {
  const id = await create();
  const before = await snapshot(id);
  const cases: [Record<string, unknown>[], string][] = [
    [[{ type: 'payments', actions: ['pay'] }], 'updater_ceiling_exceeded'],
    [[{ type: 'calendar', actions: ['write'] }], 'updater_ceiling_exceeded'],
    [[{ type: 'mail', actions: ['read'] }], 'grantor_ceiling_exceeded'],
    [[{ type: 'docs' }], 'grantor_ceiling_exceeded'],
    [[{ type: 'calendar', actions: ['read'] }], 'machine_principal_ceiling_exceeded'],
  ];
  for (const [details, code] of cases) {
    const r = await patch(id, { authorization_details: details });
    t.is(r.status, 403, code);
    t.is(r.body.error, code);
  }
  // A delegator narrower than the grantor: a grant with its own ceilings.
  const narrow = await create({
    ceilings: {
      updater: { docs: ['*'] },
      grantor: { docs: ['read', 'write'] },
      delegator: { docs: ['read'] },
      machine_principal: { docs: ['read', 'write'] },
    },
  });
  const del = await patch(narrow, { authorization_details: [{ type: 'docs', actions: ['write'] }] });
  t.is(del.status, 403);
  t.is(del.body.error, 'delegator_ceiling_exceeded');
  t.deepEqual(await snapshot(id), before);
});

test.serial(
  'PATCH: generation and consent raised, prior consent revoked, outbox entry, audit; old tokens inactive after the job',
  async (t) => {
    const id = await create();
    const tok = await agentToken(d.url, a.agent, id);
    t.is(tok.status, 200);
    const claims = decodeJwt(String(tok.body.access_token));
    t.is(claims.agent_grant_id, id);
    t.is(claims.agent_grant_gen, 1);
    const tok2 = await agentToken(d.url, a.agent, id);
    const before = await introspectAs(d.url, a.agent, String(tok.body.access_token));
    t.true(before.body.active, JSON.stringify(before.body));
    // Another client cannot use the grant.
    const foreign = await agentToken(d.url, a.machine, id);
    t.is(foreign.status, 400);
    t.is(foreign.body.error, 'invalid_grant');

    const r = await patch(id, { purpose: 'recertified', expires_at: Date.now() + 60 * DAY });
    t.is(r.status, 200);
    t.deepEqual(Object.keys(r.body).sort(), [
      'consent_required',
      'consent_version',
      'generation',
      'grant_id',
      'revocation_outbox_id',
      'status',
      'token_families_pending_revocation',
    ]);
    t.like(r.body, { grant_id: id, status: 'active', generation: 2, consent_version: 2, consent_required: true });
    t.is(r.body.token_families_pending_revocation, 2);
    t.regex(r.body.revocation_outbox_id, /^obx_/);
    const snap = await snapshot(id);
    t.is(snap.audit.length, 1);
    const consents = snap.consents as { consent_version: number; revoked_at: unknown }[];
    t.is(consents.length, 1);
    t.not(consents[0].revoked_at, null, 'the prior consent is revoked');

    // The job delivers the entry (kicked by the commit): both old tokens introspect false,
    // through the introspection cache.
    t.true(
      await until(async () => {
        const rows = (await sql(db.url, db.dir, 'SELECT status FROM outbox WHERE id = ?', [
          r.body.revocation_outbox_id,
        ])) as { status: string }[];
        return rows[0]?.status === 'delivered';
      }),
    );
    for (const tk of [tok, tok2]) {
      const after = await introspectAs(d.url, a.agent, String(tk.body.access_token));
      t.false(after.body.active);
    }
    // New tokens need the renewed consent; then they carry generation 2.
    const refused = await agentToken(d.url, a.agent, id);
    t.is(refused.status, 400);
    t.regex(String(refused.body.error_description), /consent/);
    const renewed = await api(d.url, 'POST', `/api/account/agent-grants/${id}/consent`, {
      headers: {
        cookie: await sessionCookie(db.url, db.dir, s.tenantId, a.grantor),
      },
    });
    t.is(renewed.status, 200);
    t.false(renewed.body.consent_required);
    const fresh = await agentToken(d.url, a.agent, id);
    t.is(fresh.status, 200);
    t.is(decodeJwt(String(fresh.body.access_token)).agent_grant_gen, 2);
    t.true((await introspectAs(d.url, a.agent, String(fresh.body.access_token))).body.active);
  },
);

/** A grant whose details carry RFC 9396 §2.2 common members and payment-style ones. */
const RICH = [
  {
    type: 'docs',
    actions: ['read'],
    locations: ['https://docs.example/a', 'https://docs.example/b'],
    datatypes: ['text', 'pdf'],
    privileges: ['viewer', 'commenter'],
    identifier: 'folder-1',
  },
  {
    type: 'mail',
    actions: ['send'],
    instructedAmount: { currency: 'EUR', amount: '100.00' },
    creditorAccount: { iban: 'DE02100100109307118603' },
    creditorName: 'Merchant A',
  },
];
const clone = <T>(v: T): T => structuredClone(v);

test.serial(
  'PATCH may only narrow: widening locations, privileges, datatypes, identifier, amount, currency or ' +
    'creditorAccount under the same type and actions is refused naming the field, nothing changed',
  async (t) => {
    // Every ceiling allows docs read/write, mail send and calendar read: what is refused below is
    // refused by the consented terms, not by a ceiling.
    const wide = { docs: ['read', 'write'], mail: ['send'], calendar: ['read'] };
    const id = await create({
      authorization_details: RICH,
      ceilings: { updater: wide, grantor: wide, delegator: wide, machine_principal: wide },
    });
    const before = await snapshot(id);
    const widen = (i: number, f: (e: Record<string, any>) => void) => {
      const details = clone(RICH) as Record<string, any>[];
      f(details[i]);
      return details;
    };
    const cases: [string, Record<string, unknown>[]][] = [
      ['0.locations', widen(0, (e) => e.locations.push('https://evil.example/'))],
      ['0.privileges', widen(0, (e) => e.privileges.push('admin'))],
      ['0.datatypes', widen(0, (e) => e.datatypes.push('secrets'))],
      ['0.identifier', widen(0, (e) => (e.identifier = 'folder-2'))],
      // `write` is within every ceiling; it was not consented.
      ['0.actions', widen(0, (e) => e.actions.push('write'))],
      ['0.locations', widen(0, (e) => (e.locations = []))],
      ['0.locations', widen(0, (e) => delete e.locations)],
      ['0.geolocation', widen(0, (e) => (e.geolocation = ['eu']))],
      ['1.instructedAmount', widen(1, (e) => (e.instructedAmount.amount = '100.01'))],
      ['1.instructedAmount', widen(1, (e) => (e.instructedAmount = { currency: 'USD', amount: '50' }))],
      ['1.creditorAccount', widen(1, (e) => (e.creditorAccount.iban = 'GB33BUKB20201555555555'))],
      ['1.creditorName', widen(1, (e) => (e.creditorName = 'Attacker'))],
      ['0.type', [{ type: 'calendar', actions: ['read'] }]],
    ];
    for (const [field, details] of cases) {
      const r = await patch(id, { authorization_details: details });
      t.is(r.status, 403, field);
      t.is(r.body.error, 'consented_terms_exceeded', field);
      t.true(String(r.body.message).startsWith(`body.authorization_details.${field}:`), String(r.body.message));
    }
    t.deepEqual(await snapshot(id), before, 'no widening PATCH changed anything');

    // Narrowing is accepted: fewer locations, datatypes, privileges and actions, a smaller amount
    // (decimal, exactly), one entry dropped.
    const narrowed = [
      {
        type: 'docs',
        actions: ['read'],
        locations: ['https://docs.example/b'],
        datatypes: ['pdf'],
        privileges: ['viewer'],
        identifier: 'folder-1',
      },
    ];
    const payment = widen(1, (e) => (e.instructedAmount.amount = '99.995'))[1];
    const ok = await patch(id, { authorization_details: [...narrowed, payment] });
    t.is(ok.status, 200, JSON.stringify(ok.body));
    const ok2 = await patch(id, { authorization_details: narrowed });
    t.is(ok2.status, 200, JSON.stringify(ok2.body));
    t.deepEqual((await grantRow(id)).generation, 3);
    // The bound is now the narrowed terms: the dropped entry cannot come back by PATCH.
    const back = await patch(id, { authorization_details: [...narrowed, payment] });
    t.is(back.status, 403);
    t.is(back.body.error, 'consented_terms_exceeded');
  },
);

test.serial('`constructor`, `__proto__`, `toString`, `hasOwnProperty` as a type: a 4xx, never a 500', async (t) => {
  const id = await create();
  const before = await snapshot(id);
  for (const type of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    const r = await patch(id, { authorization_details: [{ type, actions: ['read'] }] });
    t.is(r.status, 403, type);
    t.is(r.body.error, 'updater_ceiling_exceeded', type);
    const c = await api(d.url, 'POST', '/api/admin/agent-grants', {
      token: admin,
      body: grantBody(a, { authorization_details: [{ type, actions: ['read'] }] }),
    });
    t.is(c.status, 403, type);
  }
  t.deepEqual(await snapshot(id), before);
  // Such a name is an ordinary type when a ceiling lists it.
  const all = { constructor: ['read'], toString: ['read'], docs: ['read'] };
  const named = await create({
    authorization_details: [
      { type: 'constructor', actions: ['read'] },
      { type: 'toString', actions: ['read'] },
    ],
    ceilings: { updater: all, grantor: all, delegator: all, machine_principal: all },
  });
  const r = await patch(named, { authorization_details: [{ type: 'constructor', actions: ['read'] }] });
  t.is(r.status, 200, JSON.stringify(r.body));
  const widened = await patch(named, { authorization_details: [{ type: 'toString', actions: ['read'] }] });
  t.is(widened.status, 403);
  t.is(widened.body.error, 'consented_terms_exceeded');
});

test.serial("renewed consent comes only from the grantor's own session, never from an admin token", async (t) => {
  const id = await create();
  t.is((await patch(id, { purpose: 'narrowed' })).status, 200);
  const consents = () => rows('SELECT * FROM agent_grant_consents WHERE grant_id = ? ORDER BY consent_version', [id]);
  const before = await consents();
  const byAdmin = await api(d.url, 'POST', `/api/admin/agent-grants/${id}/consent`, { token: admin });
  t.is(byAdmin.status, 403);
  t.is(byAdmin.body.error, 'grantor_consent_required');
  t.deepEqual(await consents(), before, 'the admin token recorded nothing');
  t.true((await api(d.url, 'GET', `/api/admin/agent-grants/${id}`, { token: admin })).body.consent_required);
  t.is((await agentToken(d.url, a.agent, id)).status, 400, 'still no token without the consent');
  // Another user's session, or none, cannot consent for the grantor.
  const other = await sessionCookie(db.url, db.dir, s.tenantId, a.delegator);
  const url = `/api/account/agent-grants/${id}/consent`;
  t.is((await api(d.url, 'POST', url, { headers: { cookie: other } })).status, 404);
  t.is((await api(d.url, 'POST', url, { token: admin })).status, 401);
  t.deepEqual(await consents(), before);
  const mine = await sessionCookie(db.url, db.dir, s.tenantId, a.grantor);
  const foreign = await api(d.url, 'POST', url, {
    headers: {
      cookie: mine,
      origin: 'https://evil.example',
    },
  });
  t.is(foreign.status, 403);
  const shown = await api(d.url, 'GET', `/api/account/agent-grants/${id}`, { headers: { cookie: mine } });
  t.is(shown.status, 200);
  t.true(shown.body.consent_required);
  const ok = await api(d.url, 'POST', url, { headers: { cookie: mine } });
  t.is(ok.status, 200);
  t.false(ok.body.consent_required);
  const audited = (await rows(
    "SELECT actor_type, actor_id FROM audit_events WHERE action = 'agent_grant.consent' AND target_id = ?",
    [id],
  )) as { actor_type: string; actor_id: string }[];
  t.deepEqual(audited, [{ actor_type: 'user', actor_id: a.grantor }]);
  t.is((await agentToken(d.url, a.agent, id)).status, 200);
});

test.serial(
  'right after the PATCH returns, old-generation tokens introspect active: false, without the outbox job',
  async (t) => {
    const id = await create();
    const tok1 = String((await agentToken(d.url, a.agent, id)).body.access_token);
    const tok2 = String((await agentToken(d.url, a.agent, id)).body.access_token);
    for (const tk of [tok1, tok2]) t.true((await introspectAs(d.url, a.agent, tk)).body.active, 'active and cached');
    // tok2's record is removed, so the outbox job has nothing to revoke for it: only what the
    // PATCH's own transaction wrote can make it inactive.
    const jti2 = String(decodeJwt(tok2).jti);
    await sql(db.url, db.dir, 'DELETE FROM agent_grant_tokens WHERE jti = ?', [jti2]);
    const r = await patch(id, { purpose: 'narrowed', expires_at: Date.now() + 20 * DAY });
    t.is(r.status, 200);
    for (const tk of [tok1, tok2]) t.false((await introspectAs(d.url, a.agent, tk)).body.active);
    t.deepEqual(await rows('SELECT jti FROM revoked_access_tokens WHERE jti = ?', [jti2]), []);
  },
);

test.serial('ETag on GET and PATCH; If-Match on PATCH: a mismatch is 412 and changes nothing', async (t) => {
  const id = await create();
  const g = await api(d.url, 'GET', `/api/admin/agent-grants/${id}`, { token: admin });
  const etag = g.headers.get('etag');
  t.is(etag, '"g1-c1"');
  const before = await snapshot(id);
  const ifMatch = (tag: string) =>
    api(d.url, 'PATCH', `/api/admin/agent-grants/${id}`, {
      token: admin,
      body: { purpose: 'x' },
      headers: { 'if-match': tag },
    });
  for (const tag of ['"g2-c1"', 'W/"g1-c1"', '"g1-c0", "other"', 'g1-c1']) {
    const r = await ifMatch(tag);
    t.is(r.status, 412, tag);
    t.is(r.body.error, 'precondition_failed', tag);
  }
  t.deepEqual(await snapshot(id), before, 'a failed precondition changed nothing');
  const ok = await ifMatch(`"other", ${etag}`);
  t.is(ok.status, 200);
  t.is(ok.headers.get('etag'), '"g2-c0"');
  t.is((await api(d.url, 'GET', `/api/admin/agent-grants/${id}`, { token: admin })).headers.get('etag'), '"g2-c0"');
  t.is((await ifMatch(etag!)).status, 412, 'the old ETag is stale now');
  t.is((await ifMatch('*')).status, 200);
  t.is(
    (
      await api(d.url, 'PATCH', '/api/admin/agent-grants/aag_nothing', {
        token: admin,
        body: { purpose: 'x' },
        headers: { 'if-match': '*' },
      })
    ).status,
    404,
  );
});

test.serial('atomic: a failure injected right after the generation bump leaves nothing changed', async (t) => {
  const id = await create();
  const before = await snapshot(id);
  const { ds } = await openServices(db.url, db.dir);
  try {
    const service = new AgentGrantService(ds, new Outbox(ds, TEST_SECRET_KEY), { failAfter: 'agent_grant_generation' });
    await t.throwsAsync(
      service.update(
        s.tenantId,
        id,
        { purpose: 'changed', expires_at: Date.now() + 10 * DAY },
        { type: 'cli', id: 't' },
      ),
      { message: /injected failure after agent_grant_generation/ },
    );
  } finally {
    await ds.destroy();
  }
  t.deepEqual(await snapshot(id), before);
  t.is((await grantRow(id)).generation, 1);
});

test.serial(
  'client_credentials under a grant: bound, signed and recorded in one transaction; a failed record leaves no row',
  async (t) => {
    const id = await create();
    const tokensOf = () => rows('SELECT jti FROM agent_grant_tokens WHERE grant_id = ?', [id]);
    const { ds, config, directory } = await openServices(db.url, db.dir);
    const seen: { bind?: Tx; record?: Tx } = {};
    /** Sees the transaction each call gets, and fails right after the record is written. */
    class Probe extends AgentGrantService {
      override bindToken(tenantId: string, clientId: string, grantId: string, tx?: Tx) {
        seen.bind = tx;
        return super.bindToken(tenantId, clientId, grantId, tx);
      }
      override async recordToken(tenantId: string, tk: Parameters<AgentGrantService['recordToken']>[1], tx?: Tx) {
        seen.record = tx;
        await super.recordToken(tenantId, tk, tx);
        throw new Error('injected failure after the record');
      }
    }
    try {
      const keys = new KeyService(ds, config.secretKey, config.keyRetireAfterSeconds);
      // Only what the client_credentials grant uses.
      const grants = new GrantService({
        ds,
        issuer: config.issuer,
        secretKey: config.secretKey,
        directory,
        tokens: new TokenService(config.issuer, keys),
        agentGrants: new Probe(ds, new Outbox(ds, TEST_SECRET_KEY)),
        rbacTokens: new RbacTokens(ds),
      } as Partial<GrantDeps> as GrantDeps);
      const client = (await directory.resolveClient(a.agent.clientId))!.client;
      const params = new TokenParams({ grant_type: 'client_credentials', agent_grant_id: id });
      const log = { info: () => undefined, warn: () => undefined };
      await t.throwsAsync(grants.run('client_credentials', { client, params, log }), { message: /injected/ });
    } finally {
      await ds.destroy();
    }
    t.truthy(seen.bind, 'the grant is read in a transaction');
    t.is(seen.record, seen.bind, 'and the token recorded in the same one');
    t.deepEqual(await tokensOf(), [], 'rolled back with it');
    const tok = await agentToken(d.url, a.agent, id);
    t.is(tok.status, 200);
    t.deepEqual(await tokensOf(), [{ jti: decodeJwt(String(tok.body.access_token)).jti }]);
  },
);

test.serial('auth purge deletes the records of expired agent grant tokens only', async (t) => {
  const now = Date.now();
  const ins =
    'INSERT INTO agent_grant_tokens (tenant_id, jti, grant_id, generation, expires_at, created_at, revoked_at) ' +
    'VALUES (?, ?, ?, 1, ?, ?, NULL)';
  await sql(db.url, db.dir, ins, [s.tenantId, 'jti_purge_old', 'aag_x', now - 1000, now - 2000]);
  await sql(db.url, db.dir, ins, [s.tenantId, 'jti_purge_live', 'aag_x', now + 600_000, now]);
  const { ds } = await openServices(db.url, db.dir);
  try {
    const counts = await purgeAuth(ds, undefined, now);
    t.true(counts.agent_grant_tokens >= 1);
  } finally {
    await ds.destroy();
  }
  const left = (await sql(db.url, db.dir, "SELECT jti FROM agent_grant_tokens WHERE grant_id = 'aag_x'")) as {
    jti: string;
  }[];
  t.deepEqual(
    left.map((r) => r.jti),
    ['jti_purge_live'],
  );
});

test.serial(
  'revoke: 200 revoked, every token inactive at once and refused as an exchange subject, no new token; ' +
    "again 409; another tenant's grant 404",
  async (t) => {
    // An agent that may also exchange its tokens (RFC 8693), and a grant of another tenant.
    const { ds, directory, provisioning } = await openServices(db.url, db.dir);
    const now = Date.now();
    const other = (await provisioning.createTenant({ name: 'Other' }, { type: 'system', id: 'test' })).tenant.id;
    const foreignId = `aag_foreign_${now}`;
    const te = await directory.createClient(
      s.tenantId,
      { name: 'exchanging agent', grant_types: ['client_credentials', TE_GRANT], scopes: ['tools'] },
      { type: 'system', id: 'test' },
    );
    await ds.query(
      `INSERT INTO agent_grants (id, tenant_id, client_id, grantor_user_id, delegator_user_id, machine_principal_id,
         authorization_details, purpose, expires_at, status, generation, consent_version, immutable_terms, ceilings,
         created_at, updated_at)
        VALUES (?, ?, 'x', 'usr_x', NULL, NULL, '[]', NULL, ?, 'active', 1, 1, '{}', '{}', ?, ?)`,
      [foreignId, other, now + DAY, now, now],
    );
    await ds.destroy();
    const agent = { clientId: te.client.client_id, secret: te.client_secret! };
    await putSettings(d.url, admin, { enabled: true, allowedSubjectTokenTypes: ['access_token'] });
    const id = await create({ client_id: agent.clientId });
    const [tok1, tok2] = [
      String((await agentToken(d.url, agent, id)).body.access_token),
      String((await agentToken(d.url, agent, id)).body.access_token),
    ];
    t.true((await introspectAs(d.url, agent, tok1)).body.active, 'active, and cached');
    const subject = { subject_token: tok2, subject_token_type: AT };
    t.is((await exchange(d.url, agent, subject)).status, 200, 'exchangeable before the revoke');
    // tok2's record is removed, so the outbox job never revokes its jti: only the raised
    // generation can refuse it.
    await sql(db.url, db.dir, 'DELETE FROM agent_grant_tokens WHERE jti = ?', [String(decodeJwt(tok2).jti)]);
    const revoke = (gid: string, headers: Record<string, string> = {}) =>
      api(d.url, 'POST', `/api/admin/agent-grants/${gid}/revoke`, { token: admin, headers });

    const stale = await revoke(id, { 'if-match': '"g9-c1"' });
    t.is(stale.status, 412);
    const r = await revoke(id, { 'if-match': '"g1-c1"' });
    t.is(r.status, 200, JSON.stringify(r.body));
    t.like(r.body, { grant_id: id, status: 'revoked', generation: 2, consent_required: true });
    t.is(r.body.token_families_pending_revocation, 1);
    t.regex(r.body.revocation_outbox_id, /^obx_/);
    t.is(r.headers.get('etag'), '"g2-c0"');

    // At once, without waiting for the outbox job: introspection (through its cache) and the
    // token exchange refuse the grant's tokens, and no new token is issued under it.
    t.like((await introspectAs(d.url, agent, tok1)).body, { active: false });
    const exchanged = await exchange(d.url, agent, subject);
    t.is(exchanged.status, 400);
    t.regex(String(exchanged.body.error_description), /agent grant that was revoked/);
    const fresh = await agentToken(d.url, agent, id);
    t.is(fresh.status, 400);
    t.is(fresh.body.error, 'invalid_grant');
    // Nothing moves a revoked grant: a second revoke, a PATCH and the grantor's consent are 409.
    for (const again of [
      await revoke(id),
      await patch(id, { purpose: 'back' }),
      await api(d.url, 'POST', `/api/account/agent-grants/${id}/consent`, {
        headers: { cookie: await sessionCookie(db.url, db.dir, s.tenantId, a.grantor) },
      }),
    ]) {
      t.is(again.status, 409);
      t.is(again.body.error, 'agent_grant_not_active');
    }
    t.like((await api(d.url, 'GET', `/api/admin/agent-grants/${id}`, { token: admin })).body, {
      status: 'revoked',
      generation: 2,
    });
    t.is(
      (await rows("SELECT id FROM audit_events WHERE action = 'agent_grant.revoke' AND target_id = ?", [id])).length,
      1,
    );
    t.deepEqual(
      await rows('SELECT consent_version FROM agent_grant_consents WHERE grant_id = ? AND revoked_at IS NULL', [id]),
      [],
    );
    // The job then records tok1's revocation.
    const jti1 = String(decodeJwt(tok1).jti);
    t.true(
      await until(async () => (await rows('SELECT jti FROM revoked_access_tokens WHERE jti = ?', [jti1])).length === 1),
    );

    // Another tenant's grant answers like an unknown one, and stays active.
    t.is((await revoke(foreignId)).status, 404);
    t.is((await grantRow(foreignId)).status, 'active');
    t.is((await revoke('aag_nothing')).status, 404);
    t.is((await revoke('grant_1')).status, 400);
  },
);
