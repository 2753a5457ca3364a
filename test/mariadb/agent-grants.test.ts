/**
 * Two daemons on one MariaDB database: an agent's tokens issued by one under generation 1 are
 * active (and cached by the introspection of both); a PATCH through the other raises the
 * generation; as soon as the PATCH has answered, introspection on either daemon answers
 * active: false for the old tokens, cache or not, also for one the outbox job cannot revoke
 * (its record removed); the job's entry is still delivered.
 */
import test from 'ava';
import { decodeJwt } from 'jose';
import { createTestDatabase, usingMysql } from '../helpers/db.js';
import { startDaemon } from '../helpers/daemon.js';
import { clientCredentialsToken, introspectAs, seed } from '../helpers/seed.js';
import { sql } from '../helpers/oauth.js';
import { agentSetup, agentToken, DAY, grantBody } from '../helpers/agents.js';
import { api } from '../helpers/api.js';
import { until } from '../helpers/poll.js';

test('old-generation agent tokens introspect false on both daemons as soon as the PATCH answered', async (t) => {
  t.timeout(180_000);
  // This file is in the MariaDB lane's file list only; running it elsewhere is a mistake, not a skip.
  t.true(usingMysql(), 'IAM_TEST_DATABASE_URL must name a MariaDB/MySQL server (npm run test:mariadb)');
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const s = await seed(db.url, db.dir);
  const a = await agentSetup(db.url, db.dir, s.tenantId);
  const d1 = await startDaemon(db.url, db.dir);
  t.teardown(() => d1.stop());
  const d2 = await startDaemon(db.url, db.dir, { IAM_ISSUER: d1.url });
  t.teardown(() => d2.stop());
  const admin = await clientCredentialsToken(d2.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);

  const created = await api(d1.url, 'POST', '/api/admin/agent-grants', { token: admin, body: grantBody(a) });
  t.is(created.status, 201);
  const id = String(created.body.grant_id);
  const tok = await agentToken(d1.url, a.agent, id);
  t.is(tok.status, 200);
  const old = String(tok.body.access_token);
  t.is(decodeJwt(old).agent_grant_gen, 1);
  const unrecorded = String((await agentToken(d1.url, a.agent, id)).body.access_token);
  for (const d of [d1, d2])
    for (const tk of [old, unrecorded]) t.true((await introspectAs(d.url, a.agent, tk)).body.active);
  // Without its record the outbox job has nothing to revoke for this one: only the PATCH's own
  // transaction can make it inactive.
  const unrecordedJti = String(decodeJwt(unrecorded).jti);
  await sql(db.url, db.dir, 'DELETE FROM agent_grant_tokens WHERE jti = ?', [unrecordedJti]);

  const r = await api(d2.url, 'PATCH', `/api/admin/agent-grants/${id}`, {
    token: admin,
    body: {
      authorization_details: [{ type: 'docs', actions: ['read'] }],
      expires_at: Date.now() + 45 * DAY,
    },
  });
  t.is(r.status, 200);
  t.like(r.body, { generation: 2, consent_version: 2, token_families_pending_revocation: 1, consent_required: true });
  // Right after the PATCH answered, on both daemons, through their caches.
  for (const d of [d1, d2])
    for (const tk of [old, unrecorded]) t.false((await introspectAs(d.url, a.agent, tk)).body.active);
  t.deepEqual(await sql(db.url, db.dir, 'SELECT jti FROM revoked_access_tokens WHERE jti = ?', [unrecordedJti]), []);
  t.true(
    await until(
      async () => {
        const rows = (await sql(db.url, db.dir, 'SELECT status FROM outbox WHERE id = ?', [
          r.body.revocation_outbox_id,
        ])) as { status: string }[];
        return rows[0]?.status === 'delivered';
      },
      { timeoutMs: 30_000 },
    ),
  );
  for (const d of [d1, d2]) t.false((await introspectAs(d.url, a.agent, old)).body.active);
  const row = (
    (await sql(db.url, db.dir, 'SELECT generation, consent_version FROM agent_grants WHERE id = ?', [id])) as {
      generation: number;
      consent_version: number;
    }[]
  )[0];
  t.is(Number(row.generation), 2);
  t.is(Number(row.consent_version), 2);
});
