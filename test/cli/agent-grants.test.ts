/**
 * `iam agent-grants create|update|show|revoke` with --json, against a real daemon: the agent's
 * token from before the update introspects active: false once the daemon's job revoked its
 * family; a revoked grant issues no token.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { introspectAs, seed, type Seeded } from '../helpers/seed.js';
import { sql } from '../helpers/oauth.js';
import { agentSetup, agentToken, grantBody, type AgentSetup } from '../helpers/agents.js';
import { until } from '../helpers/poll.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let a: AgentSetup;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  a = await agentSetup(db.url, db.dir, s.tenantId);
  d = await startDaemon(db.url, db.dir);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

test.serial('create, show, update and revoke with --json; the old token is revoked by the daemon', async (t) => {
  const T = ['--tenant', s.tenantId];
  const body = grantBody(a) as { ceilings: Record<string, unknown> };
  const created = await iamJson(db, [
    'agent-grants',
    'create',
    ...T,
    '--client',
    a.agent.clientId,
    '--grantor',
    a.grantor,
    '--details',
    JSON.stringify([{ type: 'docs', actions: ['read'] }]),
    '--ceilings',
    JSON.stringify({ updater: body.ceilings.updater, grantor: body.ceilings.grantor }),
    '--purpose',
    'triage',
    '--expires-in-days',
    '30',
    '--scope',
    'tools',
  ]);
  t.regex(created.grant_id, /^aag_/);
  t.like(created, { generation: 1, consent_version: 1, purpose: 'triage', scopes: ['tools'] });
  const id = created.grant_id as string;

  const tok = await agentToken(d.url, a.agent, id);
  t.is(tok.status, 200);
  t.true((await introspectAs(d.url, a.agent, String(tok.body.access_token))).body.active);

  const far = await iam(db, ['agent-grants', 'update', id, ...T, '--expires-in-days', '91', '--json']);
  t.is(far.code, 1);
  t.is(JSON.parse(far.stdout).error, 'expires_at_too_far');
  const over = await iam(db, [
    'agent-grants',
    'update',
    id,
    ...T,
    '--details',
    JSON.stringify([{ type: 'mail', actions: ['read'] }]),
    '--json',
  ]);
  t.is(over.code, 1);
  t.is(JSON.parse(over.stdout).error, 'grantor_ceiling_exceeded');

  const updated = await iamJson(db, ['agent-grants', 'update', id, ...T, '--expires-in-days', '60', '--no-purpose']);
  t.like(updated, {
    grant_id: id,
    status: 'active',
    generation: 2,
    consent_version: 2,
    token_families_pending_revocation: 1,
    consent_required: true,
  });
  // The CLI only wrote the outbox entry; the daemon's job delivers it (every 2 s).
  t.true(
    await until(async () => {
      const rows = (await sql(db.url, db.dir, 'SELECT status FROM outbox WHERE id = ?', [
        updated.revocation_outbox_id,
      ])) as { status: string }[];
      return rows[0]?.status === 'delivered';
    }),
  );
  t.false((await introspectAs(d.url, a.agent, String(tok.body.access_token))).body.active);

  const shown = await iamJson(db, ['agent-grants', 'show', id, ...T]);
  t.like(shown, { grant_id: id, generation: 2, consent_version: 2, purpose: null, consent_required: true });
  const missing = await iam(db, ['agent-grants', 'show', 'aag_nothing', ...T, '--json']);
  t.is(missing.code, 1);
  t.is(JSON.parse(missing.stdout).error, 'not_found');

  // Revoke: the typed id must match; then the grant is revoked and issues no token.
  const mismatch = await iam(db, ['agent-grants', 'revoke', id, ...T, '--confirm', 'aag_other', '--json']);
  t.is(mismatch.code, 1);
  t.is(JSON.parse(mismatch.stdout).error, 'confirmation_mismatch');
  const revoked = await iamJson(db, ['agent-grants', 'revoke', id, ...T, '--confirm', id]);
  t.like(revoked, { grant_id: id, status: 'revoked', generation: 3 });
  t.regex(revoked.revocation_outbox_id, /^obx_/);
  t.is((await agentToken(d.url, a.agent, id)).body.error, 'invalid_grant');
});
