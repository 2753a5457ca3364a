/**
 * `iam federation poll` and `iam federation resolve` as an operator runs them, against a real
 * HTTPS metadata server on loopback (the CLI trusts its certificate through IAM_OUTBOUND_CA_FILE).
 */
import test from 'ava';
import { TenantScope } from '../../shared/repositories/index.js';
import { TrustSourceService } from '../../shared/services/federation/trust-sources.js';
import { makeSigner, manyEntities, signedAggregate, startMetadataServer } from '../helpers/federation-metadata.js';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('iam federation poll fetches and verifies now; resolve shows the decision and why', async (t) => {
  const server = await startMetadataServer();
  t.teardown(() => server.close());
  const signer = makeSigner();
  server.set('/fed.xml', signedAggregate({ entities: manyEntities(12, 'https://cli'), signer }));
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  const tenant = await activeTenant(services.provisioning, { name: 'Cli' }, actor);
  const source = await new TrustSourceService(services.ds, { allowLoopback: true }).create(
    tenant.id,
    {
      sourceType: 'saml_aggregate',
      sourceKey: 'edu-fed',
      displayName: 'Education federation',
      protocolPayload: { metadataUrl: `${server.base}/fed.xml`, polling: { mode: 'manual', intervalSeconds: 3600 } },
      certificates: [signer.certPem],
    },
    actor,
  );
  await services.ds.destroy();
  const env = { IAM_OUTBOUND_ALLOW_LOOPBACK: '1', IAM_OUTBOUND_CA_FILE: server.cert.certFile };

  const polled = await iam(db, ['federation', 'poll', source.id, '--tenant', tenant.id, '--json'], env);
  t.is(polled.code, 0, polled.stderr);
  const outcome = JSON.parse(polled.stdout);
  t.is(outcome.result, 'updated');
  t.is(outcome.sourceState, 'healthy');
  t.is(outcome.entityCount, 12);

  const again = await iam(db, ['federation', 'poll', source.id, '--tenant', tenant.id], env);
  t.is(again.code, 0);
  t.regex(again.stdout, /not_modified: sourceState healthy/);

  // The source was created without runtimeResolution: inventory_only, so nothing resolves.
  const d = await iamJson(db, ['federation', 'resolve', 'https://cli1.example.org/idp', '--tenant', tenant.id]);
  t.is(d.decision, 'deny');
  t.is(d.steps[0].sourceKey, 'edu-fed');
  t.regex(d.steps[0].reason, /inventory_only/);
  const text = await iam(db, ['federation', 'resolve', 'https://cli1.example.org/idp', '--tenant', tenant.id]);
  t.regex(text.stdout, /DENY: no source may resolve this entity/);
  t.regex(text.stdout, /edu-fed .*skipped: runtimeResolution.mode is inventory_only/);

  // A failing poll exits 1 and names the state and the error code.
  server.set('/fed.xml', { status: 500 });
  const failed = await iam(db, ['federation', 'poll', source.id, '--tenant', tenant.id], env);
  t.is(failed.code, 1);
  t.regex(failed.stdout, /failed: sourceState stale, lastErrorCode metadata_http_500/);
});

test('an aggregate expiring within 7 days: the poll raises metadata_expiring, resolved through the CLI, then replayed idempotently', async (t) => {
  const server = await startMetadataServer();
  t.teardown(() => server.close());
  const signer = makeSigner();
  const validUntil = new Date(Date.now() + 3 * 86_400_000).toISOString();
  server.set('/soon.xml', signedAggregate({ entities: manyEntities(3, 'https://soon'), signer, validUntil }));
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  const tenant = await activeTenant(services.provisioning, { name: 'Expiring' }, actor);
  const source = await new TrustSourceService(services.ds, { allowLoopback: true }).create(
    tenant.id,
    {
      sourceType: 'saml_aggregate',
      sourceKey: 'soon-fed',
      displayName: 'Expiring federation',
      protocolPayload: { metadataUrl: `${server.base}/soon.xml`, polling: { mode: 'manual', intervalSeconds: 3600 } },
      certificates: [signer.certPem],
    },
    actor,
  );
  await services.ds.destroy();
  const env = { IAM_OUTBOUND_ALLOW_LOOPBACK: '1', IAM_OUTBOUND_CA_FILE: server.cert.certFile };

  // The poll accepts the copy (still valid) and raises the operator's notification.
  const polled = await iam(db, ['federation', 'poll', source.id, '--tenant', tenant.id, '--json'], env);
  t.is(polled.code, 0, polled.stderr);
  t.is(JSON.parse(polled.stdout).sourceState, 'healthy');
  const open = await iamJson<{ id: string; condition: string; subjectId?: string }[]>(db, [
    'notifications',
    'list',
    '--tenant',
    tenant.id,
    '--state',
    'open',
  ]);
  t.deepEqual(
    open.map((s) => s.condition),
    ['metadata_expiring'],
  );
  const id = open[0].id;

  const r1 = await iamJson(db, [
    'notifications',
    'resolve',
    id,
    '--tenant',
    tenant.id,
    '--assigned-to',
    'noc@example.org',
  ]);
  t.deepEqual(r1, { id, previousState: 'open', state: 'resolved', idempotent: false });
  const r2 = await iamJson(db, ['notifications', 'resolve', id, '--tenant', tenant.id]);
  t.deepEqual(r2, { id, previousState: 'resolved', state: 'resolved', idempotent: true });
  // Resolved by the operator while the condition holds: the next poll does not reopen it.
  t.is((await iam(db, ['federation', 'poll', source.id, '--tenant', tenant.id], env)).code, 0);
  const still = await iamJson<unknown[]>(db, ['notifications', 'list', '--tenant', tenant.id, '--state', 'open']);
  t.deepEqual(still, []);
});

test('iam federation poll honours IAM_FEDERATION_METADATA_MAX_BYTES: an oversized document is refused, the last good copy kept', async (t) => {
  const server = await startMetadataServer();
  t.teardown(() => server.close());
  const signer = makeSigner();
  const small = signedAggregate({ entities: manyEntities(3, 'https://small'), signer });
  const big = signedAggregate({ entities: manyEntities(60, 'https://big'), signer });
  const cap = 2 * Buffer.byteLength(small);
  t.true(Buffer.byteLength(big) > cap);
  server.set('/capped.xml', small);
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  const tenant = await activeTenant(services.provisioning, { name: 'Capped' }, actor);
  const source = await new TrustSourceService(services.ds, { allowLoopback: true }).create(
    tenant.id,
    {
      sourceType: 'saml_aggregate',
      sourceKey: 'capped-fed',
      displayName: 'Capped federation',
      protocolPayload: { metadataUrl: `${server.base}/capped.xml`, polling: { mode: 'manual', intervalSeconds: 3600 } },
      certificates: [signer.certPem],
    },
    actor,
  );
  await services.ds.destroy();
  const env = {
    IAM_OUTBOUND_ALLOW_LOOPBACK: '1',
    IAM_OUTBOUND_CA_FILE: server.cert.certFile,
    IAM_FEDERATION_METADATA_MAX_BYTES: String(cap),
  };

  const first = await iam(db, ['federation', 'poll', source.id, '--tenant', tenant.id, '--json'], env);
  t.is(first.code, 0, first.stderr);
  t.is(JSON.parse(first.stdout).entityCount, 3);

  // The publisher's document grows past the operator's cap: refused, as the daemon would.
  server.set('/capped.xml', big);
  const refused = await iam(db, ['federation', 'poll', source.id, '--tenant', tenant.id], env);
  t.is(refused.code, 1, refused.stdout);
  t.regex(refused.stdout, /failed: sourceState stale, lastErrorCode metadata_fetch_too_large/);

  // The last good copy is still the one held.
  const after = await openServices(db.url, db.dir);
  t.teardown(() => after.ds.destroy());
  const inv = await new TenantScope(after.ds, tenant.id).federationEntities.inventory(source.id);
  t.is(inv?.entity_count, 3);
});
