/**
 * The two-phase rename of a custom claim held by 10,000 users, against the real daemon:
 * - two concurrent renames of the schema: exactly one is accepted, the other is 409;
 * - the daemon is killed (SIGKILL) in the middle of phase 1, with batches copied and batches
 *   to go; nothing of the batch it was in is left (the new-key rows are exactly the copied
 *   count); values written meanwhile (through the service's dual write, and behind its back
 *   straight in the database) are caught up by the switch;
 * - a second daemon takes the operation over once its lease has expired, resumes from the
 *   checkpoint and completes it: every value intact under the new key, none under the old.
 */
import test from 'ava';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import {
  actor,
  insertSchema,
  pollRename,
  renameCall,
  seedValues,
  userId,
  valueOf,
  valuesUnder,
} from '../helpers/claim-rename.js';

const USERS = 10_000;
const SLOW = {
  IAM_CLAIM_RENAME_BATCH_SIZE: '250',
  IAM_CLAIM_RENAME_BATCH_PAUSE_MS: '150',
  IAM_CLAIM_RENAME_LEASE_MS: '4000',
};

let db: TestDb;
let s: Seeded;
let services: Awaited<ReturnType<typeof openServices>>;
const daemons: Daemon[] = [];

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  services = await openServices(db.url, db.dir);
  await insertSchema(services.ds, s.tenantId, 'ccs_emp', 'employee_id');
  await seedValues(services.ds, s.tenantId, 'employee_id', USERS);
});
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  await services?.ds.destroy();
  await db?.drop();
});

async function opRow(): Promise<Record<string, unknown>> {
  const rows = await services.ds.query<Record<string, unknown>[]>(
    "SELECT * FROM claim_rename_operations WHERE schema_id = 'ccs_emp'",
  );
  return rows[0];
}

test.serial(
  '10,000 users: concurrent renames (one wins), SIGKILL mid-copy, resume on another daemon, nothing lost',
  async (t) => {
    const a = await startDaemon(db.url, db.dir, SLOW);
    daemons.push(a);
    const token = await clientCredentialsToken(a.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);

    // Two renames of one schema at once, to different keys: exactly one is accepted.
    const [r1, r2] = await Promise.all([
      renameCall(a.url, 'PATCH', token, 'ccs_emp', { new_field_key: 'staff_id' }),
      renameCall(a.url, 'PATCH', token, 'ccs_emp', { new_field_key: 'person_id' }),
    ]);
    const statuses = [r1.status, r2.status].sort();
    t.deepEqual(statuses, [202, 409], JSON.stringify([r1.body, r2.body]));
    const won = r1.status === 202 ? r1 : r2;
    const lost = r1.status === 202 ? r2 : r1;
    t.is(lost.body.error, 'rename_in_progress');
    t.is(won.body.affected_users, USERS);
    t.is(won.body.schema.operation_status, 'renaming');
    const newKey: string = won.body.new_key;
    const otherKey = newKey === 'staff_id' ? 'person_id' : 'staff_id';
    t.is((await services.ds.query('SELECT COUNT(*) AS n FROM claim_rename_operations'))[0].n, 1);

    // Mid-copy: some batches copied, more to go. Then the daemon dies without a word.
    const mid = await pollRename(
      a.url,
      token,
      'ccs_emp',
      (b) => b.operation.state === 'copying' && b.operation.copied_count > 0 && b.operation.copied_count < USERS,
      60_000,
      20,
    );
    t.true(mid.operation.copied_count < USERS);
    await a.stop('SIGKILL');

    const killed = await opRow();
    t.is(killed.state, 'copying');
    t.truthy(killed.lease_holder, 'the dead daemon still holds the lease');
    t.true(Number(killed.copied_count) >= 250 && Number(killed.copied_count) < USERS);
    // The batch it was in left nothing behind: exactly the checkpointed users have a copy.
    const copiedSoFar = await valuesUnder(services.ds, s.tenantId, newKey);
    t.is(copiedSoFar.size, Number(killed.copied_count));
    t.true([...copiedSoFar.keys()].every((u) => u <= String(killed.checkpoint)));
    t.is((await valuesUnder(services.ds, s.tenantId, 'employee_id')).size, USERS);

    // Writes while the rename is under way, to users already copied (0–249 are in the first batch):
    // user 0 through the service (its dual write), user 1 changed and user 2's value removed
    // behind its back, and a new user after the checkpoint.
    const claims = new CustomClaimsService(services.ds);
    await claims.setUserClaims(s.tenantId, userId(0), { claims: { employee_id: 'changed-0' } }, actor);
    t.is((await valuesUnder(services.ds, s.tenantId, newKey)).get(userId(0)), JSON.stringify('changed-0'));
    await services.ds.query(
      'UPDATE custom_claim_values SET value_json = ? WHERE tenant_id = ? AND field_key = ? AND user_id = ?',
      [JSON.stringify('direct-1'), s.tenantId, 'employee_id', userId(1)],
    );
    await services.ds.query('DELETE FROM custom_claim_values WHERE tenant_id = ? AND field_key = ? AND user_id = ?', [
      s.tenantId,
      'employee_id',
      userId(2),
    ]);
    await seedValues(services.ds, s.tenantId, 'employee_id', 1, USERS);

    // Another daemon: it waits out the dead one's lease, then resumes from the checkpoint.
    const b = await startDaemon(db.url, db.dir, { IAM_CLAIM_RENAME_LEASE_MS: '4000' });
    daemons.push(b);
    const tokenB = await clientCredentialsToken(b.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
    const done = await pollRename(b.url, tokenB, 'ccs_emp', (x) => x.operation.state === 'completed', 90_000, 100);
    t.is(done.schema.field_key, newKey);
    t.is(done.schema.operation_status, 'active');
    // Each user copied once: the 10,000 at the start plus the one added, no batch counted twice.
    t.is(done.operation.copied_count, USERS + 1);
    t.is(done.operation.error_code, null);

    const moved = await valuesUnder(services.ds, s.tenantId, newKey);
    t.is(moved.size, USERS);
    t.is(moved.get(userId(0)), JSON.stringify('changed-0'));
    t.is(moved.get(userId(1)), JSON.stringify('direct-1'));
    t.false(moved.has(userId(2)));
    t.is(moved.get(userId(USERS)), valueOf(USERS));
    let intact = 0;
    for (let i = 3; i < USERS; i++) if (moved.get(userId(i)) === valueOf(i)) intact++;
    t.is(intact, USERS - 3);
    t.is((await valuesUnder(services.ds, s.tenantId, 'employee_id')).size, 0);
    t.is((await valuesUnder(services.ds, s.tenantId, otherKey)).size, 0);
    // The keys are free again.
    t.is((await services.ds.query('SELECT COUNT(*) AS n FROM claim_key_reservations'))[0].n, 0);
  },
);
