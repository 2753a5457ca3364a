/**
 * `iam claims rename <id> <new-key>`: waits, printing its progress, until the rename has
 * completed (no daemon needed: it drives the runner itself); `--no-wait` returns the accepted
 * operation and a running daemon completes it; a refusal exits 1 with its error code.
 */
import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { startDaemon } from '../helpers/daemon.js';
import { clientCredentialsToken, openServices, seed } from '../helpers/seed.js';
import { iam } from '../helpers/cli.js';
import { insertSchema, pollRename, seedValues, userId, valueOf, valuesUnder } from '../helpers/claim-rename.js';

test('rename waits with progress, --no-wait returns the operation, refusals exit 1 with their code', async (t) => {
  const db = await testDatabase(t);
  const s = await seed(db.url, db.dir);
  const services = await openServices(db.url, db.dir);
  t.teardown(() => services.ds.destroy());
  await insertSchema(services.ds, s.tenantId, 'ccs_badge', 'badge_no');
  await insertSchema(services.ds, s.tenantId, 'ccs_floor', 'floor');
  await seedValues(services.ds, s.tenantId, 'badge_no', 600);
  const small = { IAM_CLAIM_RENAME_BATCH_SIZE: '100' };

  // Waits: one progress line per batch on stderr, the result on stdout.
  const waited = await iam(db, ['claims', 'rename', 'ccs_badge', 'badge_number', '--tenant', s.tenantId], small);
  t.is(waited.code, 0, waited.stderr);
  t.regex(waited.stderr, /Renaming badge_no to badge_number \(operation cro_/);
  t.regex(waited.stderr, /copying: \d+\/600/);
  t.regex(waited.stderr, /completed/);
  t.regex(waited.stdout, /Renamed badge_no to badge_number/);
  t.regex(waited.stdout, /copied:\s+600/);
  const moved = await valuesUnder(services.ds, s.tenantId, 'badge_number');
  t.is(moved.size, 600);
  t.is(moved.get(userId(599)), valueOf(599));
  t.is((await valuesUnder(services.ds, s.tenantId, 'badge_no')).size, 0);

  // --json waits too, and prints the completed rename.
  const back = await iam(db, ['claims', 'rename', 'ccs_badge', 'badge_no', '--tenant', s.tenantId, '--json'], small);
  t.is(back.code, 0, back.stdout + back.stderr);
  const done = JSON.parse(back.stdout);
  t.is(done.operation.state, 'completed');
  t.is(done.schema.field_key, 'badge_no');
  t.is(done.schema.operation_status, 'active');
  t.is(done.affected_users, 600);

  // --no-wait: accepted, still copying; a daemon completes it.
  const nowait = await iam(db, [
    'claims',
    'rename',
    'ccs_badge',
    'badge',
    '--tenant',
    s.tenantId,
    '--no-wait',
    '--json',
  ]);
  t.is(nowait.code, 0, nowait.stdout + nowait.stderr);
  const accepted = JSON.parse(nowait.stdout);
  t.is(accepted.operation.state, 'copying');
  t.is(accepted.operation.copied_count, 0);
  t.is(accepted.schema.operation_status, 'renaming');
  t.is(accepted.old_key, 'badge_no');
  t.is(accepted.new_key, 'badge');
  // Meanwhile another rename of it is refused.
  const busy = await iam(db, ['claims', 'rename', 'ccs_badge', 'badge_id', '--tenant', s.tenantId, '--json']);
  t.is(busy.code, 1);
  t.is(JSON.parse(busy.stdout).error, 'rename_in_progress');
  const d = await startDaemon(db.url, db.dir);
  t.teardown(() => d.stop());
  const token = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  const finished = await pollRename(d.url, token, 'ccs_badge', (b) => b.operation.state === 'completed');
  t.is(finished.schema.field_key, 'badge');
  t.is((await valuesUnder(services.ds, s.tenantId, 'badge')).size, 600);

  // Refusals: the error code, exit 1; the key argument is named as the operator typed it.
  const reserved = await iam(db, ['claims', 'rename', 'ccs_badge', 'sub', '--tenant', s.tenantId, '--json']);
  t.is(reserved.code, 1);
  t.is(JSON.parse(reserved.stdout).error, 'reserved_claim_key');
  const conflict = await iam(db, ['claims', 'rename', 'ccs_badge', 'floor', '--tenant', s.tenantId]);
  t.is(conflict.code, 1);
  t.regex(conflict.stderr, /floor/);
  const missing = await iam(db, ['claims', 'rename', 'ccs_nope', 'other', '--tenant', s.tenantId, '--json']);
  t.is(missing.code, 1);
  t.is(JSON.parse(missing.stdout).error, 'not_found');
});
