/** The idempotency-purge job deletes Idempotency-Key rows past their retention, and only those. */
import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { openServices } from '../helpers/seed.js';
import { idempotencyPurgeJob } from '../../daemon/jobs/idempotency-purge.js';
import { IdempotencyService } from '../../shared/services/idempotency.js';

test('expired keys are deleted, live ones kept', async (t) => {
  const db = await testDatabase(t);
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const now = Date.now();
  const ins = (id: string, expires: number) =>
    ds.query(
      `INSERT INTO idempotency_keys (id, tenant_id, principal, route, idem_key, request_hash, status, response_status,
        response_body, created_at, expires_at)
     VALUES (?, NULL, 'c', 'POST /x', ?, 'h', 'done', 200, '{}', ?, ?)`,
      [id, id, now - 1000, expires],
    );
  await ins('old', now - 1);
  await ins('live', now + 3_600_000);
  // The job as the scheduler runs it, on the service the container hands it; the count is the service's.
  const service = new IdempotencyService(ds);
  let purged: number | undefined;
  await idempotencyPurgeJob({ purgeExpired: async (signal) => (purged = await service.purgeExpired(signal)) }).run(
    new AbortController().signal,
  );
  t.is(purged, 1);
  const rows = await ds.query<{ id: string }[]>('SELECT id FROM idempotency_keys');
  t.deepEqual(
    rows.map((r) => r.id),
    ['live'],
  );
});
