/**
 * The DPoP replay store (RFC 9449 §11.1, docs/dpop.md) at the service: a proof is accepted once,
 * by whichever of two database connections (two daemons) sees it first, one winner among
 * concurrent checks, and the auth-purge job deletes the rows once the proof has expired. Runs on
 * the MariaDB lane as well (INSERT IGNORE and its affected rows).
 */
import test from 'ava';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { openServices } from '../helpers/seed.js';
import { proof, proofKey } from '../helpers/dpop.js';
import { DpopProofError, DpopService } from '../../shared/services/dpop/index.js';
import { purgeExpiredAuth } from '../../shared/services/auth/purge.js';

const ISSUER = 'https://issuer.example.test';
let db: TestDb;
let one: Awaited<ReturnType<typeof openServices>>;
let two: Awaited<ReturnType<typeof openServices>>;

test.before(async () => {
  db = await createTestDatabase();
  one = await openServices(db.url, db.dir);
  two = await openServices(db.url, db.dir);
});
test.after.always(async () => {
  await one?.ds.destroy();
  await two?.ds.destroy();
  await db?.drop();
});

test('a proof is accepted once across two connections, one winner among concurrent checks, and the purge deletes it after expiry', async (t) => {
  const a = new DpopService(one.ds, TEST_SECRET_KEY, ISSUER);
  const b = new DpopService(two.ds, TEST_SECRET_KEY, ISSUER);
  const key = await proofKey();
  const check = (s: DpopService, header: string) =>
    s.check({ tenantId: 'ten_none', header, method: 'POST', path: '/token' });

  const p = await proof(key, 'POST', `${ISSUER}/token`, { claims: { jti: 'j-1' } });
  t.truthy((await check(a, p)).jkt);
  const replay = await t.throwsAsync(() => check(b, p), { instanceOf: DpopProofError });
  t.is(replay.code, 'invalid_dpop_proof');
  // The same jti from another key is another proof (the store's key is the key and the jti).
  const otherKey = await proofKey();
  t.truthy((await check(b, await proof(otherKey, 'POST', `${ISSUER}/token`, { claims: { jti: 'j-1' } }))).jkt);

  const race = await proof(key, 'POST', `${ISSUER}/token`);
  const results = await Promise.allSettled([a, b, a, b, a, b].map((s) => check(s, race)));
  t.is(results.filter((r) => r.status === 'fulfilled').length, 1);

  // Rows outlive the proof's iat window only: a purge three minutes on deletes them all.
  const counts = await purgeExpiredAuth(one.ds, undefined, Date.now() + 180_000);
  t.is(counts.dpop_proofs, 3);
});
