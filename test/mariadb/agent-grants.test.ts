/**
 * Two daemons on one MariaDB database: an agent's token issued by one under generation 1 is
 * active (and cached by the introspection of both); a PATCH through the other raises the
 * generation; once the revocation outbox job has run, introspection on either daemon answers
 * active: false for the old token, cache or not.
 */
import test from 'ava';
import { decodeJwt } from 'jose';
import { createTestDatabase, usingMysql } from '../helpers/db.js';
import { startDaemon } from '../helpers/daemon.js';
import { clientCredentialsToken, introspectAs, seed } from '../helpers/seed.js';
import { sql } from '../helpers/oauth.js';
import { agentSetup, agentToken, call, DAY, grantBody, waitFor } from '../helpers/agents.js';

test('an old-generation agent token introspects false on both daemons once the outbox job ran', async (t) => {
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

  const created = await call(d1.url, 'POST', '/api/admin/agent-grants', admin, grantBody(a));
  t.is(created.status, 201);
  const id = String(created.body.grant_id);
  const tok = await agentToken(d1.url, a.agent, id);
  t.is(tok.status, 200);
  const old = String(tok.body.access_token);
  t.is(decodeJwt(old).agent_grant_gen, 1);
  for (const d of [d1, d2]) t.true((await introspectAs(d.url, a.agent, old)).body.active);

  const r = await call(d2.url, 'PATCH', `/api/admin/agent-grants/${id}`, admin, {
    authorization_details: [{ type: 'docs', actions: ['read', 'write'] }],
    expires_at: Date.now() + 45 * DAY,
  });
  t.is(r.status, 200);
  t.like(r.body, { generation: 2, consent_version: 2, token_families_pending_revocation: 1, consent_required: true });
  t.true(
    await waitFor(async () => {
      const rows = (await sql(db.url, db.dir, 'SELECT status FROM outbox WHERE id = ?', [
        r.body.revocation_outbox_id,
      ])) as { status: string }[];
      return rows[0]?.status === 'delivered';
    }, 30_000),
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
