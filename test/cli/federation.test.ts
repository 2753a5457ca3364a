/**
 * `iam mappings`, `iam federation` and `iam notifications` with --json, as an operator runs
 * them: a mapping set, a trust source that names it (so the set cannot be deleted), an update
 * refused for a bound and for a stale revision, and a notification resolved through the CLI
 * and resolved again idempotently.
 */
import test from 'ava';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fieldMappingServices } from '../../shared/services/federation/index.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { iam, iamJson } from '../helpers/cli.js';
import { makeCert } from '../helpers/https-issuer.js';
import { activeTenant, openServices } from '../helpers/seed.js';

let db: TestDb;
let tenantId: string;
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  db = await createTestDatabase();
  const { ds, provisioning } = await openServices(db.url, db.dir);
  try {
    tenantId = (await activeTenant(provisioning, { name: 'CLI federation' }, actor)).id;
  } finally {
    await ds.destroy();
  }
});
test.after.always(async () => {
  await db?.drop();
});

test('mappings create/list/show; federation add/list/show/update; a named set cannot be deleted', async (t) => {
  const set = await iamJson<{ id: string; mappings: unknown[] }>(db, [
    'mappings',
    'create',
    '--tenant',
    tenantId,
    '--key',
    'edugain-idp',
    '--name',
    'eduGAIN IdPs',
    '--source-type',
    'saml',
    '--map',
    'urn:oid:0.9.2342.19200300.100.1.3=user:email',
    '--map',
    'urn:oid:1.3.6.1.4.1.5923.1.1.1.9=claim:affiliation',
  ]);
  t.regex(set.id, /^fms_/);
  t.deepEqual(set.mappings, [
    { source: 'urn:oid:0.9.2342.19200300.100.1.3', targetType: 'user', target: 'email' },
    { source: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.9', targetType: 'claim', target: 'affiliation' },
  ]);
  t.is((await iamJson<{ id: string }[]>(db, ['mappings', 'list', '--tenant', tenantId]))[0].id, set.id);
  t.is(
    (await iamJson<{ setKey: string }>(db, ['mappings', 'show', set.id, '--tenant', tenantId])).setKey,
    'edugain-idp',
  );

  const cert = makeCert();
  t.teardown(() => rmSync(cert.dir, { recursive: true, force: true }));
  const source = await iamJson<Record<string, any>>(db, [
    'federation',
    'add',
    '--tenant',
    tenantId,
    '--key',
    'edugain',
    '--name',
    'eduGAIN',
    '--metadata-url',
    'https://mds.edugain.org/edugain-v2.xml',
    '--pattern',
    'https://mds.edugain.org/*',
    '--cert-file',
    cert.certFile,
    '--resolution',
    'automatic',
    '--role',
    'saml_idp',
    '--idp-mapping-set',
    set.id,
    '--preset',
    'research_federation.v1',
  ]);
  t.regex(source.id, /^fts_/);
  t.like(source.protocolPayload, {
    metadataUrl: 'https://mds.edugain.org/edugain-v2.xml',
    polling: { mode: 'automatic', intervalSeconds: 3600, sourceState: 'missing' },
    runtimeResolution: { mode: 'automatic', roles: ['saml_idp'], idpFieldMappingSetId: set.id, priority: 0 },
  });
  t.is(source.certificates.length, 1);
  t.is((await iamJson<{ id: string }[]>(db, ['federation', 'list', '--tenant', tenantId]))[0].id, source.id);
  const human = await iam(db, ['federation', 'show', 'edugain', '--tenant', tenantId]);
  t.is(human.code, 0);
  t.regex(human.stdout, /sourceState:\s+missing/);

  // The set is named by the source: not deleted, and the sources are listed.
  const del = await iam(db, ['mappings', 'delete', set.id, '--tenant', tenantId, '--json']);
  t.is(del.code, 1);
  const delErr = JSON.parse(del.stdout);
  t.is(delErr.error, 'mapping_set_in_use');
  t.regex(delErr.message, /edugain/);

  // A bound refused, naming the field.
  const bad = await iam(db, ['federation', 'update', 'edugain', '--tenant', tenantId, '--interval', '899', '--json']);
  t.is(bad.code, 1);
  const badErr = JSON.parse(bad.stdout);
  t.is(badErr.error, 'invalid_request');
  t.true(badErr.details.some((d: { field: string }) => d.field === 'body.protocolPayload.polling.intervalSeconds'));

  // An update with the revision read, then a stale one: conflict with the current value.
  const updated = await iamJson<Record<string, any>>(db, [
    'federation',
    'update',
    'edugain',
    '--tenant',
    tenantId,
    '--interval',
    '7200',
    '--expected-updated-at',
    String(source.updatedAt),
  ]);
  t.is(updated.protocolPayload.polling.intervalSeconds, 7200);
  t.is(updated.protocolPayload.runtimeResolution.idpFieldMappingSetId, set.id);
  const stale = await iam(db, [
    'federation',
    'update',
    'edugain',
    '--tenant',
    tenantId,
    '--interval',
    '900',
    '--expected-updated-at',
    String(source.updatedAt),
    '--json',
  ]);
  t.is(stale.code, 1);
  const staleErr = JSON.parse(stale.stdout);
  t.is(staleErr.error, 'conflict');
  t.is(staleErr.currentUpdatedAt, updated.updatedAt);

  // Once no source names it, the set goes.
  const other = await iamJson<{ id: string }>(db, [
    'mappings',
    'create',
    '--tenant',
    tenantId,
    '--key',
    'spare',
    '--name',
    'Spare',
    '--source-type',
    'csv',
    '--mappings-file',
    writeMappings(db.dir),
  ]);
  t.true((await iamJson<{ deleted: boolean }>(db, ['mappings', 'delete', other.id, '--tenant', tenantId])).deleted);
});

function writeMappings(dir: string): string {
  const file = join(dir, 'mappings.json');
  writeFileSync(file, JSON.stringify([{ source: 'Email', targetType: 'user', target: 'email', required: true }]));
  return file;
}

test('notifications: a raised state listed, resolved through the CLI, and resolved again idempotently', async (t) => {
  const { ds } = await openServices(db.url, db.dir);
  let id: string;
  try {
    const fm = fieldMappingServices(ds, { allowLoopback: false });
    id = (
      await fm.notifications.raise(
        tenantId,
        'metadata_expiring',
        { type: 'federation_trust_source', id: 'fts_cli' },
        {
          validUntil: '2026-11-30T00:00:00.000Z',
        },
      )
    ).id!;
  } finally {
    await ds.destroy();
  }
  const open = await iamJson<{ id: string; condition: string }[]>(db, [
    'notifications',
    'list',
    '--tenant',
    tenantId,
    '--state',
    'open',
  ]);
  t.deepEqual(
    open.map((s) => [s.id, s.condition]),
    [[id, 'metadata_expiring']],
  );
  const r1 = await iamJson(db, [
    'notifications',
    'resolve',
    id,
    '--tenant',
    tenantId,
    '--assigned-to',
    'noc@example.org',
  ]);
  t.deepEqual(r1, { id, previousState: 'open', state: 'resolved', idempotent: false });
  const r2 = await iamJson(db, ['notifications', 'resolve', id, '--tenant', tenantId]);
  t.deepEqual(r2, { id, previousState: 'resolved', state: 'resolved', idempotent: true });
  const human = await iam(db, ['notifications', 'resolve', id, '--tenant', tenantId]);
  t.regex(human.stdout, /already resolved/);
  const all = await iamJson<{ state: string; assignedTo: string }[]>(db, [
    'notifications',
    'list',
    '--tenant',
    tenantId,
  ]);
  t.like(all[0], { state: 'resolved', assignedTo: 'noc@example.org' });
  const missing = await iam(db, ['notifications', 'resolve', 'ons_nope', '--tenant', tenantId, '--json']);
  t.is(missing.code, 1);
  t.is(JSON.parse(missing.stdout).error, 'not_found');
});
