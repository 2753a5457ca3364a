/* eslint-disable max-len -- SAML metadata fixtures read best with one element per line */
/**
 * The SAML metadata poller against a REAL HTTPS metadata server on loopback serving signed
 * aggregates generated here: 200 then 304 (ETag), bad signature (error, or stale keeping the
 * last good copy), signature wrapping, DOCTYPE, expiry (entities stop resolving), a new
 * signing key (identity_change_pending), the expiring notification raised then cleared, and the
 * validity policy.
 */
import test, { type ExecutionContext } from 'ava';
import type { ApiError } from '../../shared/errors.js';
import { TenantScope } from '../../shared/repositories/index.js';
import { MetadataPoller, DEFAULT_POLLER_OPTIONS } from '../../shared/services/federation/metadata-poller.js';
import { FederationResolver } from '../../shared/services/federation/resolver.js';
import { TrustSourceService } from '../../shared/services/federation/trust-sources.js';
import { NotificationStates } from '../../shared/services/notification-states.js';
import {
  aggregateXml,
  makeSigner,
  manyEntities,
  RS,
  signedAggregate,
  signXml,
  startMetadataServer,
  type EntitySpec,
  type MetadataServer,
  type MetadataSigner,
} from '../helpers/federation-metadata.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };
const DAY = 86_400_000;

let server: MetadataServer;
let signer: MetadataSigner;
let otherSigner: MetadataSigner;
test.before(async () => {
  server = await startMetadataServer();
  signer = makeSigner();
  otherSigner = makeSigner();
});
test.after.always(async () => {
  await server?.close();
});

async function world(t: ExecutionContext) {
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  t.teardown(() => services.ds.destroy());
  const tenant = await activeTenant(services.provisioning, { name: 'Fed' }, actor);
  const notifications = new NotificationStates(services.ds);
  const poller = new MetadataPoller(services.ds, notifications, {
    ...DEFAULT_POLLER_OPTIONS,
    dataDir: db.dir,
    allowLoopback: true,
    extraCaPem: server.cert.cert,
    holder: 'test-poller',
  });
  const sources = new TrustSourceService(services.ds, { allowLoopback: true });
  const scope = new TenantScope(services.ds, tenant.id);
  // Automatic resolution names field-mapping sets; the test makes one directly.
  const setId = `fms_${Math.random().toString(36).slice(2, 10)}`;
  const now = Date.now();
  await scope.fieldMappingSets.insert({
    id: setId,
    tenant_id: tenant.id,
    set_key: 'saml-basic',
    display_name: 'SAML basic',
    description: null,
    source_type: 'saml',
    source_profile_id: null,
    lifecycle_state: 'active',
    mappings: [{ source: 'urn:oid:0.9.2342.19200300.100.1.3', targetType: 'user', target: 'email' }],
    created_at: now,
    updated_at: now,
  });
  const resolver = new FederationResolver(services.ds);
  let n = 0;
  const addSource = async (o: {
    path: string;
    policy?: 'strict' | 'warn' | 'disabled';
    pinned?: MetadataSigner[];
    runtimeResolution?: Record<string, unknown>;
  }) => {
    n += 1;
    const view = await sources.create(
      tenant.id,
      {
        sourceType: 'saml_aggregate',
        sourceKey: `src-${n}`,
        displayName: `Source ${n}`,
        protocolPayload: {
          metadataUrl: `${server.base}${o.path}`,
          policy: o.policy ?? 'strict',
          polling: { mode: 'automatic', intervalSeconds: 3600 },
          runtimeResolution: o.runtimeResolution ?? {
            mode: 'automatic',
            roles: ['saml_idp', 'saml_sp'],
            priority: 0,
            idpFieldMappingSetId: setId,
            spFieldMappingSetId: setId,
          },
        },
        certificates: (o.pinned ?? [signer]).map((s) => s.certPem),
      },
      actor,
    );
    return view.id;
  };
  const polling = async (id: string) =>
    (await sources.get(tenant.id, id)).protocolPayload.polling as Record<string, unknown>;
  return {
    dataDir: db.dir,
    ds: services.ds,
    services,
    tenantId: tenant.id,
    poller,
    sources,
    scope,
    resolver,
    notifications,
    addSource,
    polling,
    setId,
  };
}

const uniq = () => Math.random().toString(36).slice(2, 10);
const ents = (prefix: string, n = 3): EntitySpec[] => manyEntities(n, `https://${prefix}`);

test('200 then 304: the ETag is sent back, a 304 keeps the copy and records the attempt', async (t) => {
  const w = await world(t);
  const path = `/md-${uniq()}.xml`;
  server.set(path, signedAggregate({ entities: ents('a', 25), signer }));
  const id = await w.addSource({ path });

  const first = await w.poller.pollNow(w.tenantId, id);
  t.is(first.result, 'updated');
  t.is(first.sourceState, 'healthy');
  t.is(first.entityCount, 25);
  const p1 = await w.polling(id);
  t.is(p1.sourceState, 'healthy');
  t.is(typeof p1.etag, 'string');
  t.is(p1.consecutiveFailures, 0);
  t.truthy(p1.acceptedValidUntil);
  t.is(server.lastConditional[path].ifNoneMatch, undefined, 'the first GET is unconditional');

  const second = await w.poller.pollNow(w.tenantId, id);
  t.is(second.result, 'not_modified');
  t.is(second.sourceState, 'healthy');
  t.is(server.lastConditional[path].ifNoneMatch, p1.etag as string, 'If-None-Match carries the stored ETag');
  t.is(server.notModified[path], 1);
  const p2 = await w.polling(id);
  t.true((p2.lastAttemptAt as number) >= (p1.lastAttemptAt as number));
  t.true((p2.nextRefreshAt as number) > Date.now());
  // The copy is intact: an entity of it resolves.
  const d = await w.resolver.resolve(w.tenantId, 'https://a1.example.org/idp', 'saml_idp');
  t.is(d.decision, 'allow');
  t.is(d.trustSourceId, id);
  t.is((await w.scope.federationEntities.inventory(id))!.entity_count, 25);
});

test('a bad signature: error without a copy; stale with one, and the last good copy is kept', async (t) => {
  const w = await world(t);
  const path = `/md-${uniq()}.xml`;
  const good = signedAggregate({ entities: ents('b'), signer });
  // Content changed after signing: the digest no longer matches.
  const tampered = good.replace('https://b1.example.org/idp', 'https://evil.example.org/idp');
  server.set(path, tampered);
  const id = await w.addSource({ path });
  const r1 = await w.poller.pollNow(w.tenantId, id);
  t.is(r1.result, 'failed');
  t.is(r1.errorCode, 'metadata_signature_invalid');
  t.is(r1.sourceState, 'error');
  t.is((await w.polling(id)).sourceState, 'error');
  t.is(await w.scope.federationEntities.inventory(id), undefined);

  server.set(path, good);
  t.is((await w.poller.pollNow(w.tenantId, id)).sourceState, 'healthy');
  server.set(path, tampered);
  const r3 = await w.poller.pollNow(w.tenantId, id);
  t.is(r3.sourceState, 'stale');
  t.is(r3.errorCode, 'metadata_signature_invalid');
  const p = await w.polling(id);
  t.is(p.sourceState, 'stale');
  t.is(p.consecutiveFailures, 1);
  t.is(p.lastErrorCode, 'metadata_signature_invalid');
  // The good copy still answers; the tampered entity never entered it.
  t.is((await w.resolver.resolve(w.tenantId, 'https://b1.example.org/idp')).decision, 'allow');
  t.is(
    (await w.resolver.resolve(w.tenantId, 'https://evil.example.org/idp')).reason,
    'no trust source lists this entity',
  );
});

test('signature wrapping is refused: a valid signature over an element that is not the root', async (t) => {
  const w = await world(t);
  const good = signedAggregate({ entities: ents('c'), signer });
  const evil =
    '<md:EntityDescriptor entityID="https://evil.example.org/idp"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>';
  const body = good.replace(/^<\?xml[^>]*>\s*/, '');
  const sig = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(body)![0];
  const nsDecl =
    'xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:mdrpi="urn:oasis:names:tc:SAML:metadata:rpi" xmlns:mdattr="urn:oasis:names:tc:SAML:metadata:attribute" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"';
  const variants: Record<string, string> = {
    // The signed aggregate moved inside an attacker's root, with its Signature lifted up.
    'wrapped root': `<md:EntitiesDescriptor ${nsDecl} ID="_evil">${sig}${body.replace(sig, '')}${evil}</md:EntitiesDescriptor>`,
    // The original root kept, an element carrying the same ID added inside it.
    'duplicate ID': body.replace(
      '</md:EntitiesDescriptor>',
      `<md:EntitiesDescriptor ID="${/ID="([^"]+)"/.exec(body)![1]}">${evil}</md:EntitiesDescriptor></md:EntitiesDescriptor>`,
    ),
    // A second Signature.
    'two signatures': body.replace('</md:EntitiesDescriptor>', `${sig}</md:EntitiesDescriptor>`),
    // The Signature not a child of the root.
    'nested signature': `<md:EntitiesDescriptor ${nsDecl} ID="${/ID="([^"]+)"/.exec(body)![1]}"><md:EntitiesDescriptor>${sig}</md:EntitiesDescriptor>${evil}</md:EntitiesDescriptor>`,
  };
  for (const [name, xml] of Object.entries(variants)) {
    const path = `/wrap-${uniq()}.xml`;
    server.set(path, xml);
    const id = await w.addSource({ path });
    const r = await w.poller.pollNow(w.tenantId, id);
    t.is(r.result, 'failed', name);
    t.is(r.errorCode, 'metadata_signature_structure', name);
    t.is(await w.scope.federationEntities.inventory(id), undefined, name);
  }
  t.is((await w.resolver.resolve(w.tenantId, 'https://evil.example.org/idp')).decision, 'deny');
});

test('a DOCTYPE is refused before any parse', async (t) => {
  const w = await world(t);
  const path = `/dtd-${uniq()}.xml`;
  const good = signedAggregate({ entities: ents('d'), signer });
  server.set(path, good.replace(/^<\?xml[^>]*>\s*/, '<?xml version="1.0"?>\n<!DOCTYPE lol [<!ENTITY lol "lol">]>\n'));
  const id = await w.addSource({ path });
  const r = await w.poller.pollNow(w.tenantId, id);
  t.is(r.errorCode, 'metadata_doctype');
  t.is(r.sourceState, 'error');
});

test('deeply nested metadata is refused with lastErrorCode metadata_too_deep, 300 and 100,000 deep, the copy kept', async (t) => {
  const w = await world(t);
  const path = `/deep-${uniq()}.xml`;
  server.set(path, signedAggregate({ entities: ents('deep'), signer }));
  const id = await w.addSource({ path });
  t.is((await w.poller.pollNow(w.tenantId, id)).result, 'updated');
  for (const depth of [300, 100_000]) {
    const inner = '<md:Extensions>'.repeat(depth) + '</md:Extensions>'.repeat(depth);
    server.set(
      path,
      signedAggregate({ entities: ents('deep'), signer }).replace(
        '</md:EntitiesDescriptor>',
        `${inner}</md:EntitiesDescriptor>`,
      ),
    );
    const r = await w.poller.pollNow(w.tenantId, id);
    t.is(r.errorCode, 'metadata_too_deep', `depth ${depth}`);
    t.is(r.sourceState, 'stale');
    const polling = await w.polling(id);
    t.is(polling.lastErrorCode, 'metadata_too_deep');
    t.is((await w.scope.federationEntities.inventory(id))?.entity_count, 3);
  }
});

test('validUntil passed: the source is expired and its entities no longer resolve', async (t) => {
  const w = await world(t);
  const path = `/exp-${uniq()}.xml`;
  const validUntil = Date.now() + DAY;
  server.set(path, signedAggregate({ entities: ents('e'), signer, validUntil: new Date(validUntil).toISOString() }));
  const id = await w.addSource({ path });
  t.is((await w.poller.pollNow(w.tenantId, id)).sourceState, 'healthy');
  t.is((await w.resolver.resolve(w.tenantId, 'https://e1.example.org/idp')).decision, 'allow');
  // Two days on (the poller's clock moved, not the test waiting): the server has nothing newer
  // (304), and the copy held is past its validUntil.
  const later = new MetadataPoller(w.ds, w.notifications, {
    ...DEFAULT_POLLER_OPTIONS,
    dataDir: w.dataDir,
    allowLoopback: true,
    extraCaPem: server.cert.cert,
    holder: 'test-poller',
    now: () => validUntil + DAY,
  });
  const r = await later.pollNow(w.tenantId, id);
  t.is(r.result, 'not_modified');
  t.is(r.sourceState, 'expired');
  t.is((await w.polling(id)).sourceState, 'expired');
  const d = await w.resolver.resolve(w.tenantId, 'https://e1.example.org/idp', undefined, validUntil + DAY);
  t.is(d.decision, 'deny');
  t.regex(d.steps[0].reason, /expired/);
  t.is(
    (await w.notifications.open(w.tenantId, 'metadata_expired', { type: 'federation_trust_source', id }))?.state,
    'open',
  );
  // A fetched document that is already expired is refused, and the state stays expired.
  server.set(path, signedAggregate({ entities: ents('e'), signer, validUntil: new Date(validUntil).toISOString() }));
  const r2 = await later.pollNow(w.tenantId, id);
  t.is(r2.errorCode, 'metadata_expired');
  t.is(r2.sourceState, 'expired');
});

test('a new signing key: identity_change_pending, the copy kept, signing_identity_changed raised', async (t) => {
  const w = await world(t);
  const path = `/key-${uniq()}.xml`;
  server.set(path, signedAggregate({ entities: ents('f'), signer }));
  const id = await w.addSource({ path });
  t.is((await w.poller.pollNow(w.tenantId, id)).sourceState, 'healthy');
  server.set(path, signedAggregate({ entities: ents('g'), signer: otherSigner }));
  const r = await w.poller.pollNow(w.tenantId, id);
  t.is(r.sourceState, 'identity_change_pending');
  t.is(r.errorCode, 'metadata_signing_key_changed');
  const state = await w.notifications.open(w.tenantId, 'signing_identity_changed', {
    type: 'federation_trust_source',
    id,
  });
  t.is(state?.details.newFingerprint, otherSigner.fingerprint);
  // The last good copy (signed by the pinned key) is still the one used.
  t.is((await w.resolver.resolve(w.tenantId, 'https://f1.example.org/idp')).decision, 'allow');
  t.is((await w.resolver.resolve(w.tenantId, 'https://g1.example.org/idp')).decision, 'deny');
  t.is((await w.scope.federationEntities.inventory(id))!.signing_fingerprint, signer.fingerprint);
});

test('an aggregate expiring within 7 days raises metadata_expiring; a renewed one clears it', async (t) => {
  const w = await world(t);
  const path = `/soon-${uniq()}.xml`;
  const subject = { type: 'federation_trust_source', id: '' };
  server.set(
    path,
    signedAggregate({ entities: ents('h'), signer, validUntil: new Date(Date.now() + 3 * DAY).toISOString() }),
  );
  const id = await w.addSource({ path });
  subject.id = id;
  t.is((await w.poller.pollNow(w.tenantId, id)).sourceState, 'healthy');
  const open = await w.notifications.open(w.tenantId, 'metadata_expiring', subject);
  t.is(open?.state, 'open');
  t.truthy(open?.details.validUntil);
  server.set(
    path,
    signedAggregate({ entities: ents('h'), signer, validUntil: new Date(Date.now() + 10 * DAY).toISOString() }),
  );
  t.is((await w.poller.pollNow(w.tenantId, id)).result, 'updated');
  t.is(await w.notifications.open(w.tenantId, 'metadata_expiring', subject), undefined);
  const all = await w.notifications.list(w.tenantId, { condition: 'metadata_expiring' });
  t.is(all.length, 1);
  t.is(all[0].state, 'resolved');
  t.is(all[0].resolution, 'automatic');
});

test('policy strict requires validUntil within 14 days; warn accepts a longer one', async (t) => {
  const w = await world(t);
  const far = `/far-${uniq()}.xml`;
  server.set(
    far,
    signedAggregate({ entities: ents('i'), signer, validUntil: new Date(Date.now() + 30 * DAY).toISOString() }),
  );
  const strict = await w.addSource({ path: far });
  t.is((await w.poller.pollNow(w.tenantId, strict)).errorCode, 'metadata_valid_until_too_far');
  const none = `/none-${uniq()}.xml`;
  server.set(none, signedAggregate({ entities: ents('j'), signer, validUntil: null }));
  const strictNone = await w.addSource({ path: none });
  t.is((await w.poller.pollNow(w.tenantId, strictNone)).errorCode, 'metadata_valid_until_missing');
  const warn = await w.addSource({ path: far, policy: 'warn' });
  t.is((await w.poller.pollNow(w.tenantId, warn)).sourceState, 'healthy');
});

test('refresh failing three times raises refresh_failing; a success clears it; 404 without a copy is missing', async (t) => {
  const w = await world(t);
  const path = `/gone-${uniq()}.xml`;
  const id = await w.addSource({ path });
  const r = await w.poller.pollNow(w.tenantId, id);
  t.is(r.errorCode, 'metadata_http_404');
  t.is(r.sourceState, 'missing');
  server.set(path, { status: 503 });
  await w.poller.pollNow(w.tenantId, id);
  const r3 = await w.poller.pollNow(w.tenantId, id);
  t.is(r3.consecutiveFailures, 3);
  t.is(r3.sourceState, 'error');
  // Backoff grows with the failures, never beyond the interval.
  t.true(r3.nextRefreshAt! - Date.now() > 200_000 && r3.nextRefreshAt! - Date.now() <= 3_600_000);
  const subject = { type: 'federation_trust_source', id };
  t.is((await w.notifications.open(w.tenantId, 'refresh_failing', subject))?.state, 'open');
  server.set(path, signedAggregate({ entities: ents('k'), signer }));
  t.is((await w.poller.pollNow(w.tenantId, id)).sourceState, 'healthy');
  t.is(await w.notifications.open(w.tenantId, 'refresh_failing', subject), undefined);
});

test('the due-source job path polls automatic sources that are due, and a large aggregate is replaced whole', async (t) => {
  const w = await world(t);
  const path = `/big-${uniq()}.xml`;
  server.set(path, signedAggregate({ entities: manyEntities(1234, 'https://big'), signer }));
  const id = await w.addSource({ path });
  const outcomes = await w.poller.runDue(undefined, Date.now() + 1000);
  const mine = outcomes.find((o) => o.trustSourceId === id);
  t.is(mine?.result, 'updated');
  t.is(mine?.entityCount, 1234);
  const first = (await w.scope.federationEntities.inventory(id))!;
  // A new document replaces the generation; no entity of the old one remains.
  server.set(path, signedAggregate({ entities: manyEntities(700, 'https://new'), signer }));
  t.is((await w.poller.pollNow(w.tenantId, id)).entityCount, 700);
  const second = (await w.scope.federationEntities.inventory(id))!;
  t.true(second.active_generation > first.active_generation);
  t.is((await w.scope.federationEntities.listLive(id, 1000, 0)).length, 700);
  t.is(await w.scope.federationEntities.maxGeneration(id), second.active_generation);
  t.is((await w.resolver.resolve(w.tenantId, 'https://big5.example.org/idp')).decision, 'deny');
  t.is((await w.resolver.resolve(w.tenantId, 'https://new5.example.org/idp')).decision, 'allow');
  // Not due now (next refresh ahead): the job leaves it alone.
  const again = await w.poller.runDue();
  t.false(again.some((o) => o.trustSourceId === id));
});

test('the inventory: roles, registration authority, categories, hide-from-discovery and SIRTFI', async (t) => {
  const w = await world(t);
  const path = `/inv-${uniq()}.xml`;
  const xml = signXml(
    aggregateXml({
      entities: [
        {
          entityId: 'https://rs-sp.example.org/sp',
          roles: ['saml_sp'],
          registrationAuthority: 'https://fed.example.org/',
          categories: [RS],
          sirtfi: true,
        },
        {
          entityId: 'https://hidden.example.org/idp',
          roles: ['saml_idp'],
          hideFromDiscovery: true,
          categorySupport: [RS],
        },
      ],
    }),
    signer,
  );
  server.set(path, xml);
  const id = await w.addSource({ path });
  await w.poller.pollNow(w.tenantId, id);
  const rows = await w.scope.federationEntities.listLive(id, 10, 0);
  const sp = rows.find((r) => r.entity_id === 'https://rs-sp.example.org/sp')!;
  t.deepEqual(sp.roles, ['saml_sp']);
  t.is(sp.registration_authority, 'https://fed.example.org/');
  t.deepEqual(sp.entity_categories, [RS]);
  t.true(sp.sirtfi);
  t.false(sp.hide_from_discovery);
  const idp = rows.find((r) => r.entity_id === 'https://hidden.example.org/idp')!;
  t.true(idp.hide_from_discovery);
  t.deepEqual(idp.entity_category_support, [RS]);
});

test('the byte cap ends an oversized download; the source keeps no partial copy', async (t) => {
  const w = await world(t);
  const path = `/cap-${uniq()}.xml`;
  server.set(path, signedAggregate({ entities: ents('cap', 50), signer }));
  const id = await w.addSource({ path });
  const small = new MetadataPoller(w.ds, w.notifications, {
    ...DEFAULT_POLLER_OPTIONS,
    maxBytes: 10_000,
    dataDir: w.dataDir,
    allowLoopback: true,
    extraCaPem: server.cert.cert,
    holder: 'test-poller',
  });
  const r = await small.pollNow(w.tenantId, id);
  t.is(r.errorCode, 'metadata_fetch_too_large');
  t.is(r.sourceState, 'error');
  t.is(await w.scope.federationEntities.inventory(id), undefined);
});

test('bytes that are not UTF-8 are refused as not well-formed', async (t) => {
  const w = await world(t);
  const path = `/bytes-${uniq()}.xml`;
  const good = Buffer.from(signedAggregate({ entities: ents('u'), signer }));
  const bad = Buffer.concat([good.subarray(0, 2000), Buffer.from([0xff, 0xfe, 0xfd]), good.subarray(2000)]);
  server.set(path, bad);
  const id = await w.addSource({ path });
  t.is((await w.poller.pollNow(w.tenantId, id)).errorCode, 'metadata_xml');
});

test("a dripping source of one tenant does not delay another tenant's due source past one poll slot", async (t) => {
  const w = await world(t);
  const other = await activeTenant(w.services.provisioning, { name: 'Other' }, actor);
  // Tenant A: two sources that drip a byte every 100 ms (inside the idle timeout) until the
  // publisher is told to stop.
  const dripA1 = `/drip-${uniq()}.xml`;
  const dripA2 = `/drip-${uniq()}.xml`;
  server.set(dripA1, { drip: 100 });
  server.set(dripA2, { drip: 100 });
  const a1 = await w.addSource({ path: dripA1 });
  const a2 = await w.addSource({ path: dripA2 });
  // Tenant B: one good source, falling due after both of A's (so a queue in due order puts it last);
  // a clock to pass, so its due time is later than theirs.
  await new Promise((r) => setTimeout(r, 20));
  const pathB = `/b-${uniq()}.xml`;
  server.set(pathB, signedAggregate({ entities: ents('b'), signer }));
  const b = (
    await w.sources.create(
      other.id,
      {
        sourceType: 'saml_aggregate',
        sourceKey: 'b-fed',
        displayName: 'B',
        protocolPayload: {
          metadataUrl: `${server.base}${pathB}`,
          polling: { mode: 'automatic', intervalSeconds: 3600 },
        },
        certificates: [signer.certPem],
      },
      actor,
    )
  ).id;
  // What the poller reports to /metrics.
  const lateness: number[] = [];
  const inFlight: number[] = [];
  const poller = new MetadataPoller(w.ds, w.notifications, {
    ...DEFAULT_POLLER_OPTIONS,
    dataDir: w.dataDir,
    allowLoopback: true,
    extraCaPem: server.cert.cert,
    holder: 'test-poller',
    metrics: {
      federationPollLateness: (s) => lateness.push(s),
      federationPollsInFlight: (n) => inFlight.push(n),
    },
    concurrency: 2,
    rescanMs: 100,
    idleTimeoutMs: 20_000,
    // The document deadline: one poll slot. A's drips would be cut off here; the publisher stops
    // dripping as soon as B's request has arrived, so with a fair pool the test does not wait for
    // it, and a sequential queue (which reaches B only after A's drips) meets it twice.
    totalTimeoutMs: 30_000,
  });
  const stopDrips = setInterval(() => {
    if (server.events.some((e) => e.path === pathB && e.event === 'request')) server.endDrips();
  }, 50);
  const outcomes = await poller.runDue(undefined, Date.now() + 1000).finally(() => clearInterval(stopDrips));
  const of = (id: string) => outcomes.find((o) => o.trustSourceId === id)!;
  t.is(of(a1).result, 'failed');
  t.is(of(a2).result, 'failed');
  t.is(of(b).result, 'updated', `${of(b).errorCode}: ${of(b).message}`);
  // By the poller's own bookkeeping: B started before either of A's drips ended, and no later
  // than one slot after it fell due.
  t.true(of(b).startedAt < Math.min(of(a1).finishedAt, of(a2).finishedAt));
  t.true(of(b).latenessMs! <= poller.slotMs, `lateness ${of(b).latenessMs} ms, slot ${poller.slotMs} ms`);
  // Fair across tenants: B got its one poll in flight before A got a second.
  t.true(of(b).startedAt <= of(a2).startedAt);
  // And as the metadata server saw it: B's request came while A's first drip was still open.
  const at = (path: string, event: string) => server.events.findIndex((e) => e.path === path && e.event === event);
  t.true(at(pathB, 'request') >= 0);
  t.true(at(pathB, 'request') < at(dripA1, 'drip_closed'));
  // The metrics saw each start's lateness, never more than two polls in flight, and none at the end.
  t.is(lateness.length, 3);
  t.true(lateness.includes(of(b).latenessMs! / 1000));
  t.is(Math.max(...inFlight), 2);
  t.is(inFlight.at(-1), 0);
});

test('a tenant may have at most IAM_FEDERATION_MAX_AUTOMATIC_SOURCES automatic sources: 409 naming polling.mode', async (t) => {
  const w = await world(t);
  const capped = new TrustSourceService(w.ds, { allowLoopback: true, maxAutomaticSources: 2 });
  const body = (key: string, mode: 'automatic' | 'manual') => ({
    sourceType: 'saml_aggregate',
    sourceKey: key,
    displayName: key,
    protocolPayload: { metadataUrl: `${server.base}/cap.xml`, polling: { mode, intervalSeconds: 3600 } },
    certificates: [signer.certPem],
  });
  await capped.create(w.tenantId, body('auto-1', 'automatic'), actor);
  const second = await capped.create(w.tenantId, body('auto-2', 'automatic'), actor);
  const refused = await t.throwsAsync<ApiError>(capped.create(w.tenantId, body('auto-3', 'automatic'), actor));
  t.is(refused.status, 409);
  t.is(refused.error, 'automatic_polling_limit');
  t.is(refused.extra.field, 'body.protocolPayload.polling.mode');
  t.regex(refused.message, /^body\.protocolPayload\.polling\.mode: .*at most 2/);
  // Manual polling is not capped; turning it automatic is.
  const manual = await capped.create(w.tenantId, body('manual-1', 'manual'), actor);
  const turned = await t.throwsAsync<ApiError>(
    capped.update(
      w.tenantId,
      manual.id,
      { expectedUpdatedAt: manual.updatedAt, protocolPayload: body('x', 'automatic').protocolPayload },
      actor,
    ),
  );
  t.is(turned.error, 'automatic_polling_limit');
  // A source that is automatic already stays editable at the cap.
  const edited = await capped.update(
    w.tenantId,
    second.id,
    { expectedUpdatedAt: second.updatedAt, displayName: 'renamed' },
    actor,
  );
  t.is(edited.result.displayName, 'renamed');
  // Another tenant has its own count.
  const other = await activeTenant(w.services.provisioning, { name: 'Other cap' }, actor);
  await t.notThrowsAsync(capped.create(other.id, body('auto-1', 'automatic'), actor));
});

test("the queue is read round robin across tenants: one tenant's many due sources do not fill a read", async (t) => {
  const w = await world(t);
  const other = await activeTenant(w.services.provisioning, { name: 'Round robin' }, actor);
  const many = [];
  for (let i = 0; i < 4; i++) many.push(await w.addSource({ path: `/rr-${uniq()}.xml` }));
  // A clock to pass: the late source falls due after the others.
  await new Promise((r) => setTimeout(r, 20));
  const late = await w.sources.create(
    other.id,
    {
      sourceType: 'saml_aggregate',
      sourceKey: 'rr',
      displayName: 'Round robin',
      protocolPayload: { metadataUrl: `${server.base}/rr.xml`, polling: { mode: 'automatic', intervalSeconds: 3600 } },
      certificates: [signer.certPem],
    },
    actor,
  );
  // A read of two: the earliest of the first tenant, and the other tenant's only one, though
  // three of the first tenant's fell due before it.
  const page = await w.sources.due(Date.now() + 1000, 2);
  t.deepEqual(
    page.map((r) => r.id),
    [many[0], late.id],
  );
});
