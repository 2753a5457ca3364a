import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { openServices } from '../helpers/seed.js';
import { purgeAuth } from '../../daemon/jobs/auth-purge.js';

test('auth purge deletes only what has expired past its retention', async (t) => {
  const db = await testDatabase(t);
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const now = Date.now();
  const day = 86_400_000;
  const ins = (sql: string, rows: unknown[][]) => Promise.all(rows.map((r) => ds.query(sql, r)));
  await ins(
    'INSERT INTO auth_requests (id, tenant_id, client_id, params, created_at, expires_at, consumed_at) VALUES (?, ' +
      '?, ?, ?, ?, ?, NULL)',
    [
      ['old', 't', 'c', '{}', now - day, now - 1000],
      ['live', 't', 'c', '{}', now, now + 60_000],
    ],
  );
  await ins(
    'INSERT INTO email_codes (id, tenant_id, email, user_id, client_id, code_hash, attempts, created_at, ' +
      'expires_at, consumed_at) VALUES (?, ?, ?, NULL, ?, ?, 0, ?, ?, NULL)',
    [
      ['ec_old', 't', 'a@b.c', 'c', 'h', now - day, now - 2 * 3_600_000],
      ['ec_recent', 't', 'a@b.c', 'c', 'h', now, now - 60_000],
    ],
  );
  await ins('INSERT INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at) VALUES (?, ?, ?, ?)', [
    ['gone', 't', now - 1, now - day],
    ['kept', 't', now + 600_000, now],
  ]);
  await ins(
    'INSERT INTO sessions (id, tenant_id, user_id, created_at, expires_at, auth_time, acr, amr, user_agent, ip, ' +
      "last_seen_at, revoked_at) VALUES (?, 't', 'u', ?, ?, ?, 'a', '[]', NULL, NULL, ?, ?)",
    [
      ['s_old_revoked', now - 40 * day, now + day, now - 40 * day, now - 40 * day, now - 31 * day],
      ['s_recent_revoked', now - day, now + day, now - day, now - day, now - day],
      ['s_live', now, now + day, now, now, null],
    ],
  );
  await ins('INSERT INTO rate_limits (rl_key, points, expire_at) VALUES (?, ?, ?)', [
    ['rl_ended', 3, now - 1],
    ['rl_live', 3, now + 60_000],
  ]);
  const counts = await purgeAuth(ds, undefined, now);
  t.is(counts.rate_limits, 1);
  t.is(counts.auth_requests, 1);
  t.is(counts.email_codes, 1);
  t.is(counts.revoked_access_tokens, 1);
  t.is(counts.sessions, 1);
  const ids = async (table: string, key = 'id') =>
    (await ds.query<{ k: string }[]>(`SELECT ${key} AS k FROM ${table} ORDER BY ${key}`)).map((r) => r.k);
  t.deepEqual(await ids('auth_requests'), ['live']);
  t.deepEqual(await ids('email_codes'), ['ec_recent']);
  t.deepEqual(await ids('revoked_access_tokens', 'jti'), ['kept']);
  t.deepEqual(await ids('sessions'), ['s_live', 's_recent_revoked']);
  t.deepEqual(await ids('rate_limits', 'rl_key'), ['rl_live']);
});

test('outbox purge deletes delivered rows after a day and failed ones after a week, nothing pending', async (t) => {
  const { purgeOutbox } = await import('../../daemon/jobs/outbox-purge.js');
  const db = await testDatabase(t);
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const now = Date.now();
  const day = 86_400_000;
  const rows: [string, string, number][] = [
    ['d_old', 'delivered', now - 2 * day],
    ['d_new', 'delivered', now - 1000],
    ['f_old', 'failed', now - 8 * day],
    ['f_new', 'failed', now - 2 * day],
    ['p_old', 'pending', now - 30 * day],
  ];
  for (const [id, status, at] of rows) {
    await ds.query(
      'INSERT INTO outbox (id, tenant_id, kind, payload_sealed, status, attempts, next_attempt_at, claimed_by, ' +
        'claimed_until, last_error, delivered_via, created_at, updated_at) ' +
        "VALUES (?, NULL, 'email', '', ?, 0, ?, NULL, NULL, NULL, NULL, ?, ?)",
      [id, status, at, at, at],
    );
  }
  t.is(await purgeOutbox(ds), 2);
  const left = (await ds.query<{ id: string }[]>('SELECT id FROM outbox ORDER BY id')).map((r) => r.id);
  t.deepEqual(left, ['d_new', 'f_new', 'p_old']);
});
