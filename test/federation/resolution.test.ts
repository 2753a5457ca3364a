/**
 * Runtime resolution (shared/services/federation/resolution.ts): priority order, roles,
 * registration authorities, entity-category rules then defaultDecision, inventory_only never
 * resolving, an expired copy never resolving; every decision carries its reasons.
 */
import test from 'ava';
import { decide, type ResolutionEntity, type ResolutionSource } from '../../shared/services/federation/resolution.js';

const RS = 'http://refeds.org/category/research-and-scholarship';
const now = Date.UTC(2026, 0, 1);

function source(
  id: string,
  rr: ResolutionSource['runtimeResolution'],
  extra: Partial<ResolutionSource> = {},
): ResolutionSource {
  return {
    id,
    sourceKey: id,
    lifecycleState: 'active',
    suspendedByMetadataSync: false,
    runtimeResolution: rr,
    ...extra,
  };
}
function entity(trustSourceId: string, extra: Partial<ResolutionEntity> = {}): ResolutionEntity {
  return {
    trustSourceId,
    entityId: 'https://idp.example.edu/idp',
    roles: ['saml_idp'],
    registrationAuthority: 'https://fed-a.example.org/',
    entityCategories: [],
    entityCategorySupport: [],
    validUntil: now + 86_400_000,
    ...extra,
  };
}

test('the highest priority source that may resolve decides; lower ones are not consulted', (t) => {
  const low = source('low', { mode: 'automatic', roles: ['saml_idp'], priority: 1 });
  const high = source('high', {
    mode: 'automatic',
    roles: ['saml_idp'],
    priority: 50,
    defaultAttributePresetId: 'basic.v1',
  });
  const d = decide('https://idp.example.edu/idp', 'saml_idp', [low, high], [entity('low'), entity('high')], now);
  t.is(d.decision, 'allow');
  t.is(d.trustSourceId, 'high');
  t.is(d.attributePresetId, 'basic.v1');
  t.deepEqual(
    d.steps.map((s) => [s.trustSourceId, s.outcome]),
    [['high', 'allow']],
  );
});

test('inventory_only never resolves, even at the highest priority', (t) => {
  const inv = source('inv', { mode: 'inventory_only', roles: ['saml_idp'], priority: 1000 });
  const auto = source('auto', { mode: 'automatic', roles: ['saml_idp'], priority: -5 });
  const d = decide('https://idp.example.edu/idp', undefined, [inv, auto], [entity('inv'), entity('auto')], now);
  t.is(d.trustSourceId, 'auto');
  t.is(d.steps[0].outcome, 'skipped');
  t.regex(d.steps[0].reason, /inventory_only/);
  const only = decide('https://idp.example.edu/idp', undefined, [inv], [entity('inv')], now);
  t.is(only.decision, 'deny');
  t.is(only.trustSourceId, null);
  t.is(only.reason, 'no source may resolve this entity');
});

test('roles: the requested role must be served by both the source and the entity', (t) => {
  const sp = source('sp', { mode: 'automatic', roles: ['saml_sp'], priority: 10 });
  const idp = source('idp', { mode: 'automatic', roles: ['saml_idp'], priority: 0 });
  const d = decide('https://idp.example.edu/idp', 'saml_idp', [sp, idp], [entity('sp'), entity('idp')], now);
  t.is(d.trustSourceId, 'idp');
  t.is(d.role, 'saml_idp');
  t.regex(d.steps[0].reason, /role saml_idp/);
  // An SP-only entity asked for as an IdP: denied.
  const none = decide('x', 'saml_idp', [idp], [entity('idp', { roles: ['saml_sp'] })], now);
  t.is(none.decision, 'deny');
});

test('registrationAuthorities filter the entities a source admits', (t) => {
  const fedB = source('b', {
    mode: 'automatic',
    roles: ['saml_idp'],
    priority: 9,
    registrationAuthorities: ['https://fed-b.example.org/'],
  });
  const any = source('any', { mode: 'automatic', roles: ['saml_idp'], priority: 0 });
  const d = decide('x', undefined, [fedB, any], [entity('b'), entity('any')], now);
  t.is(d.trustSourceId, 'any');
  t.regex(d.steps[0].reason, /registration authority https:\/\/fed-a\.example\.org\//);
});

test('entity category policy: the first matching rule, else defaultDecision', (t) => {
  const policy = {
    defaultDecision: 'deny' as const,
    rules: [
      { entityCategory: RS, decision: 'allow' as const, attributePresetId: 'research_federation.v1' },
      { entityCategory: 'http://example.org/blocked', decision: 'deny' as const },
    ],
  };
  const s = source('s', {
    mode: 'automatic',
    roles: ['saml_idp', 'saml_sp'],
    priority: 0,
    entityCategoryPolicy: policy,
  });
  const rs = decide('x', undefined, [s], [entity('s', { entityCategories: [RS] })], now);
  t.is(rs.decision, 'allow');
  t.is(rs.attributePresetId, 'research_federation.v1');
  t.regex(rs.reason, /research-and-scholarship: allow/);
  // entity-category-support counts (an IdP supporting R&S).
  t.is(decide('x', undefined, [s], [entity('s', { entityCategorySupport: [RS] })], now).decision, 'allow');
  const plain = decide('x', undefined, [s], [entity('s')], now);
  t.is(plain.decision, 'deny');
  t.regex(plain.reason, /defaultDecision deny/);
  t.is(plain.attributePresetId, null);
});

test('an expired copy, a suspended or inactive source never resolves', (t) => {
  const rr = { mode: 'automatic', roles: ['saml_idp'], priority: 0 };
  const d1 = decide('x', undefined, [source('s', rr)], [entity('s', { validUntil: now - 1 })], now);
  t.is(d1.decision, 'deny');
  t.regex(d1.steps[0].reason, /expired/);
  t.is(
    decide('x', undefined, [source('s', rr, { suspendedByMetadataSync: true })], [entity('s')], now).decision,
    'deny',
  );
  t.is(decide('x', undefined, [source('s', rr, { lifecycleState: 'disabled' })], [entity('s')], now).decision, 'deny');
  t.is(decide('x', undefined, [], [], now).reason, 'no trust source lists this entity');
});
