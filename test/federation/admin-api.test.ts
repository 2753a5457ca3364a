/**
 * The field-mapping and federation admin API (docs/federation.md): source profiles with
 * Idempotency-Key replay and schemaHash, field-mapping sets (a referenced set cannot be
 * deleted), federation trust sources (every bound refused naming its field, optimistic
 * concurrency with expectedUpdatedAt, poller fields ignored in a body and reset by an update,
 * Idempotency-Key replay), and operational notification states (list, resolve, replay).
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createHash, X509Certificate } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { schemaHash } from '../../shared/services/federation/source-profiles.js';
import { fieldMappingServices } from '../../shared/services/federation/index.js';
import { makeCert } from '../helpers/https-issuer.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let admin: string;
let platform: string;
let otherAdmin: string;
let otherTenantId: string;
let services: Awaited<ReturnType<typeof openServices>>;
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  services = await openServices(db.url, db.dir);
  const other = await activeTenant(services.provisioning, { name: 'Other' }, actor);
  otherTenantId = other.id;
  const o = await services.directory.createClient(
    other.id,
    { name: 'other admin', grant_types: ['client_credentials'], scopes: ['iam.admin'] },
    actor,
  );
  d = await startDaemon(db.url, db.dir);
  admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  otherAdmin = await clientCredentialsToken(d.url, o.client.client_id, o.client_secret!);
});
test.after.always(async () => {
  await d?.stop();
  await services?.ds.destroy();
  await db?.drop();
});

const base = '/api/admin/field-mapping';
// Every call carries a bearer token: the admin's unless the test names another.
const call = (method: string, p: string, body?: unknown, opts: { token?: string; key?: string } = {}) =>
  api(d.url, method, p, { body, token: opts.token ?? admin, idempotencyKey: opts.key });

async function mappingSet(setKey: string, sourceType = 'saml') {
  const r = await call('POST', `${base}/sets`, {
    setKey,
    displayName: setKey,
    sourceType,
    mappings: [
      { source: 'urn:oid:0.9.2342.19200300.100.1.3', targetType: 'user', target: 'email' },
      { source: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.9', targetType: 'claim', target: 'affiliation', multiValued: true },
    ],
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.result as { id: string };
}

const sourceBody = (sourceKey: string, idpSet: string, extra: Record<string, unknown> = {}) => ({
  sourceType: 'saml_aggregate',
  sourceKey,
  displayName: `Federation ${sourceKey}`,
  protocolPayload: {
    description: 'research and education aggregate',
    metadataUrl: 'https://mds.example.org/aggregate.xml',
    metadataUrlPatterns: ['https://mds.example.org/*.xml'],
    policy: 'strict',
    polling: { mode: 'automatic', intervalSeconds: 3600 },
    runtimeResolution: {
      mode: 'automatic',
      roles: ['saml_idp'],
      priority: 10,
      idpFieldMappingSetId: idpSet,
      defaultAttributePresetId: 'research_federation.v1',
      registrationAuthorities: ['https://www.example.org/ra'],
      entityCategoryPolicy: {
        defaultDecision: 'deny',
        rules: [
          {
            entityCategory: 'http://refeds.org/category/research-and-scholarship',
            decision: 'allow',
            attributePresetId: 'research_federation.v1',
          },
        ],
      },
    },
    ...extra,
  },
});

// ---- source profiles ----------------------------------------------------------------------

test('source profile create: result per spec, schemaHash of the JCS form, Idempotency-Key replay returns the same result', async (t) => {
  const schema = { attributes: [{ name: 'mail', type: 'string' }], primaryKey: 'mail', version: 2.0 };
  const body = {
    sourceType: 'csv',
    profileKey: 'hr-export',
    displayName: 'HR export',
    versionLabel: '2026-11',
    schema,
    parserOptions: { delimiter: ';' },
    warningSummary: { skippedRows: 0 },
  };
  const key = randomUUID();
  const first = await call('POST', `${base}/source-profiles`, body, { key });
  t.is(first.status, 201, JSON.stringify(first.body));
  const r = first.body.result;
  t.like(r, {
    tenantId: s.tenantId,
    profileKey: 'hr-export',
    displayName: 'HR export',
    lifecycleState: 'active',
    sourceType: 'csv',
  });
  t.regex(r.id, /^spr_/);
  t.is(r.activeVersionId, r.version.id);
  t.like(r.version, { versionLabel: '2026-11', lifecycleState: 'active', schema, warningSummary: { skippedRows: 0 } });
  t.is(
    r.version.schemaHash,
    schemaHash({ version: 2, primaryKey: 'mail', attributes: [{ type: 'string', name: 'mail' }] }),
  );
  const replay = await call('POST', `${base}/source-profiles`, body, { key });
  t.is(replay.status, 201);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(replay.body.result, r);
  // The same key with another body is refused; the same profileKey without a key is a conflict.
  t.is((await call('POST', `${base}/source-profiles`, { ...body, displayName: 'x' }, { key })).status, 422);
  const dup = await call('POST', `${base}/source-profiles`, body);
  t.is(dup.status, 409);
  t.regex(dup.body.message, /profileKey hr-export/);
  // Read back, by id and by key; a new version becomes active.
  t.deepEqual((await call('GET', `${base}/source-profiles/${r.id}`)).body.result, r);
  t.is((await call('GET', `${base}/source-profiles/hr-export`)).body.result.id, r.id);
  t.true((await call('GET', `${base}/source-profiles`)).body.sourceProfiles.some((p: { id: string }) => p.id === r.id));
  const v2 = await call('POST', `${base}/source-profiles/${r.id}/versions`, { versionLabel: 'v2', schema: { a: 1 } });
  t.is(v2.status, 201);
  t.is(v2.body.result.activeVersionId, v2.body.result.version.id);
  t.is((await call('GET', `${base}/source-profiles/${r.id}/versions`)).body.versions.length, 2);
  t.is(
    (await call('POST', `${base}/source-profiles/${r.id}/versions`, { versionLabel: 'v2', schema: {} })).status,
    409,
  );
  // Without a schema: a profile and no version.
  const bare = await call('POST', `${base}/source-profiles`, {
    sourceType: 'scim',
    profileKey: 'scim-in',
    displayName: 'SCIM',
  });
  t.is(bare.status, 201);
  t.is(bare.body.result.activeVersionId, null);
  t.false('version' in bare.body.result);
});

test('source profile create refuses bad input naming the field', async (t) => {
  for (const [body, field] of [
    [{ sourceType: 'ldif', profileKey: 'k', displayName: 'd' }, 'body.sourceType'],
    [{ sourceType: 'csv', profileKey: 'has space', displayName: 'd' }, 'body.profileKey'],
    [{ sourceType: 'csv', profileKey: 'k', displayName: '' }, 'body.displayName'],
    [{ sourceType: 'csv', profileKey: 'k', displayName: 'd', schema: [] }, 'body.schema'],
  ] as const) {
    const r = await call('POST', `${base}/source-profiles`, body);
    t.is(r.status, 400, field);
    t.true(String(r.body.message).startsWith(`${field}:`), `${field}: ${r.body.message}`);
  }
});

// ---- field-mapping sets -------------------------------------------------------------------

test('field-mapping sets: CRUD; a set a trust source names cannot be deleted (409 naming the source)', async (t) => {
  const set = await mappingSet('idp-basic');
  t.is((await call('GET', `${base}/sets/idp-basic`)).body.result.id, set.id);
  const src = await call('POST', `${base}/federation-trust-sources`, sourceBody('uses-set', set.id));
  t.is(src.status, 201, JSON.stringify(src.body));
  const del = await call('DELETE', `${base}/sets/${set.id}`);
  t.is(del.status, 409);
  t.is(del.body.error, 'mapping_set_in_use');
  t.deepEqual(del.body.sources, [{ id: src.body.result.id, sourceKey: 'uses-set' }]);
  t.regex(del.body.message, /uses-set/);
  // Update replaces the mappings; validation names the mapping.
  const upd = await call('PUT', `${base}/sets/${set.id}`, {
    displayName: 'IdP basic',
    sourceType: 'saml',
    mappings: [{ source: 'mail', targetType: 'user', target: 'email' }],
  });
  t.is(upd.status, 200);
  t.is(upd.body.result.mappings.length, 1);
  for (const [mappings, msg] of [
    [[{ source: 'x', targetType: 'user', target: 'shoe_size' }], /user field/],
    [[{ source: 'x', targetType: 'claim', target: 'sub' }], /set by the service/],
    [
      [
        { source: 'a', targetType: 'user', target: 'email' },
        { source: 'b', targetType: 'user', target: 'email' },
      ],
      /already filled by mappings\.0/,
    ],
  ] as const) {
    const r = await call('POST', `${base}/sets`, { setKey: 'bad', displayName: 'bad', sourceType: 'saml', mappings });
    t.is(r.status, 400);
    t.regex(r.body.message, /^body\.mappings\.\d\.target: /);
    t.regex(r.body.message, msg);
  }
  // An unreferenced set is deleted.
  const free = await mappingSet('unused');
  t.is((await call('DELETE', `${base}/sets/${free.id}`)).status, 204);
  t.is((await call('GET', `${base}/sets/${free.id}`)).status, 404);
});

// ---- federation trust sources -------------------------------------------------------------

test('trust source create and list: the record per spec, poller fields inside protocolPayload.polling', async (t) => {
  const set = await mappingSet('idp-list');
  const cert = makeCert();
  rmSync(cert.dir, { recursive: true, force: true });
  const pem = cert.cert;
  const sha256 = createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');
  const body = { ...sourceBody('edugain', set.id), certificates: [pem] };
  const r = await call('POST', `${base}/federation-trust-sources`, body);
  t.is(r.status, 201, JSON.stringify(r.body));
  const src = r.body.result;
  t.regex(src.id, /^fts_/);
  t.like(src, { tenantId: s.tenantId, sourceType: 'saml_aggregate', sourceKey: 'edugain', lifecycleState: 'active' });
  t.like(src.protocolPayload, {
    metadataUrl: 'https://mds.example.org/aggregate.xml',
    policy: 'strict',
    polling: {
      mode: 'automatic',
      intervalSeconds: 3600,
      consecutiveFailures: 0,
      sourceState: 'missing',
      suspendedByMetadataSync: false,
    },
  });
  t.is(typeof src.protocolPayload.polling.nextRefreshAt, 'number');
  t.like(src.protocolPayload.runtimeResolution, {
    mode: 'automatic',
    roles: ['saml_idp'],
    priority: 10,
    idpFieldMappingSetId: set.id,
  });
  t.is(src.certificates[0].sha256, sha256);
  t.is(typeof src.createdAt, 'number');
  t.is(src.createdAt, src.updatedAt);
  const list = await call('GET', `${base}/federation-trust-sources`);
  t.is(list.status, 200);
  t.deepEqual(
    list.body.federationTrustSources.find((x: { id: string }) => x.id === src.id),
    src,
  );
  t.is((await call('POST', `${base}/federation-trust-sources`, body)).status, 409);
  // Priority defaults to 0.
  const plain = sourceBody('defaults', set.id);
  delete (plain.protocolPayload.runtimeResolution as Record<string, unknown>).priority;
  t.is(
    (await call('POST', `${base}/federation-trust-sources`, plain)).body.result.protocolPayload.runtimeResolution
      .priority,
    0,
  );
  // Another tenant's admin cannot list this tenant's sources; a platform admin can.
  t.is(
    (await call('GET', `${base}/federation-trust-sources?tenant_id=${s.tenantId}`, undefined, { token: otherAdmin }))
      .status,
    403,
  );
  t.deepEqual(
    (await call('GET', `${base}/federation-trust-sources`, undefined, { token: otherAdmin })).body
      .federationTrustSources,
    [],
  );
  t.true(
    (await call('GET', `${base}/federation-trust-sources?tenant_id=${s.tenantId}`, undefined, { token: platform })).body
      .federationTrustSources.length > 0,
  );
  t.is(otherTenantId.length > 0, true);
});

test('trust source update: every bound refused with an error naming the field', async (t) => {
  const set = await mappingSet('idp-bounds');
  const spSet = await mappingSet('sp-bounds');
  const created = (await call('POST', `${base}/federation-trust-sources`, sourceBody('bounds', set.id))).body.result;
  const rr = (over: Record<string, unknown>) => ({
    ...sourceBody('bounds', set.id).protocolPayload.runtimeResolution,
    ...over,
  });
  const pp = (over: Record<string, unknown>) => ({ ...sourceBody('bounds', set.id).protocolPayload, ...over });
  const ras = (n: number) => Array.from({ length: n }, (_, i) => `https://ra${i}.example.org`);
  const rules = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ entityCategory: `urn:x:${i}`, decision: 'allow' }));
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'interval below 900',
      { protocolPayload: pp({ polling: { mode: 'automatic', intervalSeconds: 899 } }) },
      'body.protocolPayload.polling.intervalSeconds',
    ],
    [
      'interval above 604800',
      { protocolPayload: pp({ polling: { mode: 'automatic', intervalSeconds: 604801 } }) },
      'body.protocolPayload.polling.intervalSeconds',
    ],
    [
      'interval not whole',
      { protocolPayload: pp({ polling: { mode: 'automatic', intervalSeconds: 1000.5 } }) },
      'body.protocolPayload.polling.intervalSeconds',
    ],
    [
      'interval missing',
      { protocolPayload: pp({ polling: { mode: 'manual' } }) },
      'body.protocolPayload.polling.intervalSeconds',
    ],
    [
      'polling mode',
      { protocolPayload: pp({ polling: { mode: 'sometimes', intervalSeconds: 900 } }) },
      'body.protocolPayload.polling.mode',
    ],
    [
      'priority below -1000',
      { protocolPayload: pp({ runtimeResolution: rr({ priority: -1001 }) }) },
      'body.protocolPayload.runtimeResolution.priority',
    ],
    [
      'priority above 1000',
      { protocolPayload: pp({ runtimeResolution: rr({ priority: 1001 }) }) },
      'body.protocolPayload.runtimeResolution.priority',
    ],
    [
      'roles repeated',
      { protocolPayload: pp({ runtimeResolution: rr({ roles: ['saml_idp', 'saml_idp'] }) }) },
      'body.protocolPayload.runtimeResolution.roles',
    ],
    [
      'role unknown',
      { protocolPayload: pp({ runtimeResolution: rr({ roles: ['oidc_op'] }) }) },
      'body.protocolPayload.runtimeResolution.roles.0',
    ],
    [
      '101 registration authorities',
      { protocolPayload: pp({ runtimeResolution: rr({ registrationAuthorities: ras(101) }) }) },
      'body.protocolPayload.runtimeResolution.registrationAuthorities',
    ],
    [
      'registration authority repeated',
      {
        protocolPayload: pp({ runtimeResolution: rr({ registrationAuthorities: ['https://a.org', 'https://a.org'] }) }),
      },
      'body.protocolPayload.runtimeResolution.registrationAuthorities',
    ],
    [
      '101 rules',
      {
        protocolPayload: pp({
          runtimeResolution: rr({ entityCategoryPolicy: { defaultDecision: 'deny', rules: rules(101) } }),
        }),
      },
      'body.protocolPayload.runtimeResolution.entityCategoryPolicy.rules',
    ],
    [
      'rule decision',
      {
        protocolPayload: pp({
          runtimeResolution: rr({
            entityCategoryPolicy: { defaultDecision: 'deny', rules: [{ entityCategory: 'x', decision: 'maybe' }] },
          }),
        }),
      },
      'body.protocolPayload.runtimeResolution.entityCategoryPolicy.rules.0.decision',
    ],
    [
      'defaultDecision missing',
      { protocolPayload: pp({ runtimeResolution: rr({ entityCategoryPolicy: { rules: [] } }) }) },
      'body.protocolPayload.runtimeResolution.entityCategoryPolicy.defaultDecision',
    ],
    [
      'rule preset',
      {
        protocolPayload: pp({
          runtimeResolution: rr({
            entityCategoryPolicy: {
              defaultDecision: 'deny',
              rules: [{ entityCategory: 'x', decision: 'allow', attributePresetId: 'gold.v9' }],
            },
          }),
        }),
      },
      'body.protocolPayload.runtimeResolution.entityCategoryPolicy.rules.0.attributePresetId',
    ],
    [
      'default preset',
      { protocolPayload: pp({ runtimeResolution: rr({ defaultAttributePresetId: 'basic.v2' }) }) },
      'body.protocolPayload.runtimeResolution.defaultAttributePresetId',
    ],
    [
      'idp set missing for automatic saml_idp',
      { protocolPayload: pp({ runtimeResolution: rr({ idpFieldMappingSetId: undefined }) }) },
      'body.protocolPayload.runtimeResolution.idpFieldMappingSetId',
    ],
    [
      'sp set missing for automatic saml_sp',
      { protocolPayload: pp({ runtimeResolution: rr({ roles: ['saml_idp', 'saml_sp'] }) }) },
      'body.protocolPayload.runtimeResolution.spFieldMappingSetId',
    ],
    [
      'idp set of no such id',
      { protocolPayload: pp({ runtimeResolution: rr({ idpFieldMappingSetId: 'fms_nope' }) }) },
      'body.protocolPayload.runtimeResolution.idpFieldMappingSetId',
    ],
    [
      'resolution mode',
      { protocolPayload: pp({ runtimeResolution: rr({ mode: 'eager' }) }) },
      'body.protocolPayload.runtimeResolution.mode',
    ],
    [
      'roles missing',
      { protocolPayload: pp({ runtimeResolution: { mode: 'inventory_only' } }) },
      'body.protocolPayload.runtimeResolution.roles',
    ],
    ['policy', { protocolPayload: pp({ policy: 'lenient' }) }, 'body.protocolPayload.policy'],
    [
      'metadataUrl not https',
      { protocolPayload: pp({ metadataUrl: 'http://mds.example.org/aggregate.xml', metadataUrlPatterns: [] }) },
      'body.protocolPayload.metadataUrl',
    ],
    [
      'metadataUrl outside the patterns',
      { protocolPayload: pp({ metadataUrl: 'https://evil.example.net/aggregate.xml' }) },
      'body.protocolPayload.metadataUrl',
    ],
    [
      'metadataUrl missing for automatic polling',
      { protocolPayload: pp({ metadataUrl: null }) },
      'body.protocolPayload.metadataUrl',
    ],
    [
      'pattern not https',
      { protocolPayload: pp({ metadataUrlPatterns: ['ftp://x/*'] }) },
      'body.protocolPayload.metadataUrlPatterns.0',
    ],
    ['sourceType', { sourceType: 'oidc_federation' }, 'body.sourceType'],
    ['lifecycleState', { lifecycleState: 'zombie' }, 'body.lifecycleState'],
    ['sourceKey', { sourceKey: 'a b' }, 'body.sourceKey'],
    ['certificate not PEM', { certificates: ['hello'] }, 'body.certificates.0'],
    [
      'certificate unparseable',
      { certificates: ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'] },
      'body.certificates.0',
    ],
    ['protocolPayload not an object', { protocolPayload: 'x' }, 'body.protocolPayload'],
  ];
  t.is(spSet.id.length > 0, true);
  for (const [name, change, field] of cases) {
    const r = await call('PUT', `${base}/federation-trust-sources/${created.id}`, {
      expectedUpdatedAt: created.updatedAt,
      ...change,
    });
    t.is(r.status, 400, `${name}: ${JSON.stringify(r.body)}`);
    t.true(String(r.body.message).startsWith(`${field}:`), `${name}: ${r.body.message}`);
  }
  const missing = await call('PUT', `${base}/federation-trust-sources/${created.id}`, { displayName: 'x' });
  t.is(missing.status, 400);
  t.regex(missing.body.message, /^body\.expectedUpdatedAt:/);
  // Nothing was changed by any refused update.
  t.is((await call('GET', `${base}/federation-trust-sources/${created.id}`)).body.result.updatedAt, created.updatedAt);
  // The bounds themselves are accepted.
  const ok = await call('PUT', `${base}/federation-trust-sources/${created.id}`, {
    expectedUpdatedAt: created.updatedAt,
    protocolPayload: pp({
      polling: { mode: 'manual', intervalSeconds: 604800 },
      runtimeResolution: rr({
        roles: ['saml_idp', 'saml_sp'],
        spFieldMappingSetId: spSet.id,
        priority: -1000,
        registrationAuthorities: ras(100),
        entityCategoryPolicy: { defaultDecision: 'allow', rules: rules(100) },
      }),
    }),
  });
  t.is(ok.status, 200, JSON.stringify(ok.body));
});

test('trust source update: stale expectedUpdatedAt is 409 with the current value; poller fields ignored in the body and reset; Idempotency-Key replay', async (t) => {
  const set = await mappingSet('idp-occ');
  const created = (await call('POST', `${base}/federation-trust-sources`, sourceBody('occ', set.id))).body.result;
  // The poller records a poll (under its lease), as the metadata poller does.
  const fm = fieldMappingServices(services.ds, { allowLoopback: false });
  t.true(await fm.trustSources.claim(s.tenantId, created.id, 'poller-1', 60_000, true));
  t.true(
    await fm.trustSources.recordPoll(s.tenantId, created.id, 'poller-1', {
      etag: '"v1"',
      last_modified: 'Tue, 24 Nov 2026 10:00:00 GMT',
      last_attempt_at: Date.now(),
      last_success_at: Date.now(),
      consecutive_failures: 2,
      source_state: 'stale',
      last_error_code: 'http_503',
      accepted_valid_until: Date.UTC(2026, 11, 1),
      snapshot_hash: 'ab'.repeat(32),
      signing_fingerprint: 'cd'.repeat(32),
      suspended_by_metadata_sync: true,
    }),
  );
  const polled = (await call('GET', `${base}/federation-trust-sources/${created.id}`)).body.result;
  t.like(polled.protocolPayload.polling, {
    etag: '"v1"',
    sourceState: 'stale',
    consecutiveFailures: 2,
    acceptedValidUntil: '2026-12-01T00:00:00.000Z',
    suspendedByMetadataSync: true,
  });
  t.is(polled.snapshotHash, 'ab'.repeat(32));
  // A poll does not move the operator's revision.
  t.is(polled.updatedAt, created.updatedAt);

  // The operator sends back what it read (poller fields included), changing the interval.
  const payload = {
    ...polled.protocolPayload,
    polling: { ...polled.protocolPayload.polling, intervalSeconds: 7200, etag: '"forged"', sourceState: 'healthy' },
  };
  const key = randomUUID();
  const body = { expectedUpdatedAt: created.updatedAt, displayName: 'OCC federation', protocolPayload: payload };
  const r1 = await call('PUT', `${base}/federation-trust-sources/${created.id}`, body, { key });
  t.is(r1.status, 200, JSON.stringify(r1.body));
  const updated = r1.body.result;
  t.true(updated.updatedAt > created.updatedAt);
  t.is(updated.displayName, 'OCC federation');
  const polling = updated.protocolPayload.polling;
  t.is(polling.intervalSeconds, 7200);
  // Reset, not taken from the body: validators, counters, observations, state.
  t.is(polling.etag, undefined);
  t.is(polling.lastModified, undefined);
  t.is(polling.lastAttemptAt, undefined);
  t.is(polling.lastSuccessAt, undefined);
  t.is(polling.lastErrorCode, undefined);
  t.is(polling.acceptedValidUntil, undefined);
  t.is(polling.consecutiveFailures, 0);
  t.is(polling.sourceState, 'missing');
  t.is(polling.suspendedByMetadataSync, false);
  t.is(updated.snapshotHash, undefined);
  // The poller that held the lease lost it: its late write changes nothing.
  t.false(await fm.trustSources.recordPoll(s.tenantId, created.id, 'poller-1', { etag: '"late"' }));

  // Replay with the same key: the same result, not a second update (and not a 409 for the now-stale revision).
  const r2 = await call('PUT', `${base}/federation-trust-sources/${created.id}`, body, { key });
  t.is(r2.status, 200);
  t.is(r2.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(r2.body.result, updated);

  // Without the key the same body is stale now: 409 with the current value.
  const stale = await call('PUT', `${base}/federation-trust-sources/${created.id}`, body);
  t.is(stale.status, 409);
  t.is(stale.body.error, 'conflict');
  t.is(stale.body.currentUpdatedAt, updated.updatedAt);
  t.regex(stale.body.message, /expectedUpdatedAt/);
  // With the current value it goes through.
  const r3 = await call('PUT', `${base}/federation-trust-sources/${created.id}`, {
    expectedUpdatedAt: updated.updatedAt,
    lifecycleState: 'disabled',
  });
  t.is(r3.status, 200);
  t.is(r3.body.result.lifecycleState, 'disabled');
  t.is(r3.body.result.protocolPayload.polling.intervalSeconds, 7200);
  t.is((await call('PUT', `${base}/federation-trust-sources/fts_nope`, { expectedUpdatedAt: 1 })).status, 404);
});

// ---- operational notification states -------------------------------------------------------

test('notification states: list with filters, resolve with assignedTo, replay and second resolve are idempotent', async (t) => {
  const fm = fieldMappingServices(services.ds, { allowLoopback: false });
  const subject = { type: 'federation_trust_source', id: 'fts_notify' };
  const raised = await fm.notifications.raise(s.tenantId, 'metadata_expiring', subject, {
    validUntil: '2026-11-30T00:00:00Z',
  });
  await fm.notifications.raise(s.tenantId, 'refresh_failing', subject, { failures: 5 });
  const list = await call('GET', `${base}/operational-notification-states?state=open&condition=metadata_expiring`);
  t.is(list.status, 200);
  const mine = list.body.operationalNotificationStates.filter(
    (x: { subjectId: string }) => x.subjectId === 'fts_notify',
  );
  t.is(mine.length, 1);
  t.like(mine[0], {
    id: raised.id,
    condition: 'metadata_expiring',
    state: 'open',
    subjectType: 'federation_trust_source',
    occurrences: 1,
  });
  t.is((await call('GET', `${base}/operational-notification-states?limit=201`)).status, 400);
  t.is((await call('GET', `${base}/operational-notification-states?state=closed`)).status, 400);

  const key = randomUUID();
  const path = `${base}/operational-notification-states/${raised.id}/resolve`;
  const r1 = await call('POST', path, { assignedTo: 'noc@example.org' }, { key });
  t.is(r1.status, 200);
  t.deepEqual(r1.body, { result: { id: raised.id, previousState: 'open', state: 'resolved', idempotent: false } });
  const r2 = await call('POST', path, { assignedTo: 'noc@example.org' }, { key });
  t.is(r2.status, 200);
  t.deepEqual(r2.body.result, { id: raised.id, previousState: 'open', state: 'resolved', idempotent: true });
  const r3 = await call('POST', path, {});
  t.deepEqual(r3.body, { result: { id: raised.id, previousState: 'resolved', state: 'resolved', idempotent: true } });
  const one = await call('GET', `${base}/operational-notification-states/${raised.id}`);
  t.like(one.body.result, { state: 'resolved', assignedTo: 'noc@example.org', resolution: 'operator' });
  t.is((await call('POST', `${base}/operational-notification-states/ons_nope/resolve`, {})).status, 404);
  // Another tenant's admin cannot resolve it (it is not in that tenant).
  t.is((await call('POST', path, {}, { token: otherAdmin })).status, 404);
  t.is((await call('POST', path, { assignedTo: 5 })).status, 400);
});
