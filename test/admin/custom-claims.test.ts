/**
 * /api/admin/custom-claims and /api/admin/tenants/{tenantId}/users/{id}/claims: create, list,
 * get, deactivate, every refusal and bound, tenant reach and isolation, per-user values with
 * each validation refusal, emission into ID tokens, access tokens and userinfo per the
 * bindings, the data export's `custom_claims`, and the audit events.
 */
import test from 'ava';
import { SCOPE_PLATFORM } from '../../shared/scopes.js';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import { LIMITS } from '../../shared/schemas/claims.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { ACCOUNT_SCOPE, loginKit } from '../helpers/login.js';
import { sql } from '../helpers/oauth.js';
import { api } from '../helpers/api.js';

let e: LoginEnv;
let platform: string;
let admin: string;
let noScope: string;
let otherTenantId: string;
let otherSchemaId: string;
let otherUserId: string;
const kit = loginKit(
  () => e.d.url,
  () => e.sink,
);
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  e = await startLoginEnv();
  const { ds, directory, provisioning } = await openServices(e.db.url, e.db.dir);
  const p = await directory.createClient(
    e.app.tenantId,
    { name: 'platform', grant_types: ['client_credentials'], scopes: [SCOPE_PLATFORM] },
    actor,
  );
  const other = await activeTenant(provisioning, { name: 'Other' }, actor);
  otherTenantId = other.id;
  const claims = new CustomClaimsService(ds);
  otherSchemaId = (
    await claims.createSchema(other.id, { field_key: 'badge', display_label: 'Badge', field_type: 'string' }, actor)
  ).id;
  otherUserId = (await directory.createUser(other.id, { email: 'other@example.com', name: 'Other' }, actor)).id;
  await ds.destroy();
  platform = await clientCredentialsToken(e.d.url, p.client.client_id, p.client_secret!);
  admin = await clientCredentialsToken(e.d.url, e.app.admin.clientId, e.app.admin.secret);
  noScope = await clientCredentialsToken(e.d.url, e.api.clientId, e.api.secret);
});
test.after.always(async () => {
  await stopLoginEnv(e);
});

const call = (method: string, path: string, token?: string, body?: unknown) =>
  api(e.d.url, method, path, { token, body });
const BASE = '/api/admin/custom-claims';
const create = (body: Record<string, unknown>, token = admin, query = '') =>
  call('POST', `${BASE}${query}`, token, body);
const userPath = (userId: string, tenantId = e.app.tenantId) => `/api/admin/tenants/${tenantId}/users/${userId}/claims`;
const putClaims = (userId: string, claims: Record<string, unknown>, token = admin, tenantId?: string) =>
  call('PUT', userPath(userId, tenantId), token, { claims });
const payload = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as Record<string, any>;

test.serial(
  'reach: 401 without a token, 403 without an admin scope or for another tenant, 404 for no tenant',
  async (t) => {
    t.is((await call('GET', BASE)).status, 401);
    t.is((await call('POST', BASE, undefined, {})).status, 401);
    const scope = await call('GET', BASE, noScope);
    t.is(scope.status, 403);
    t.is(scope.body.error, 'insufficient_scope');
    const other = await call('GET', `${BASE}?tenant_id=${otherTenantId}`, admin);
    t.is(other.status, 403);
    t.is(other.body.error, 'tenant_forbidden');
    const otherValues = await call('GET', userPath(otherUserId, otherTenantId), admin);
    t.is(otherValues.status, 403);
    t.is(otherValues.body.error, 'tenant_forbidden');
    const missing = await call('GET', `${BASE}?tenant_id=ten_doesnotexist`, platform);
    t.is(missing.status, 404);
    const missingCreate = await create(
      { field_key: 'x_missing', display_label: 'X', field_type: 'string' },
      platform,
      '?tenant_id=ten_doesnotexist',
    );
    t.is(missingCreate.status, 404);
    t.is(missingCreate.body.error, 'not_found');
  },
);

test.serial('every tenant has the system schemas: email and name, is_system 1', async (t) => {
  const r = await call('GET', BASE, admin);
  t.is(r.status, 200);
  const system = r.body.schemas.filter((s: any) => s.is_system === 1);
  t.deepEqual(
    system.map((s: any) => [s.field_key, s.field_type, s.is_active, s.operation_status]),
    [
      ['email', 'email', 1, 'active'],
      ['name', 'string', 1, 'active'],
    ],
  );
  t.false(
    r.body.schemas.some((s: any) => s.field_key === 'badge'),
    "another tenant's schema is not listed",
  );
  // Listing twice writes them once.
  const again = await call('GET', BASE, admin);
  t.is(again.body.schemas.filter((s: any) => s.is_system === 1).length, 2);
  const email = system[0];
  const d = await call('POST', `${BASE}/${email.id}/deactivate`, admin);
  t.is(d.status, 409);
  t.is(d.body.error, 'system_claim_schema');
});

test.serial('create, get and list: the spec record, flags as 0/1, times in epoch ms', async (t) => {
  const before = Date.now();
  const r = await create({
    field_key: 'department',
    display_label: 'Department',
    field_type: 'string',
    is_pii: true,
    field_usage_bindings: [{ token_type: 'id_token' }],
  });
  t.is(r.status, 201);
  const s = r.body;
  t.regex(s.id, /^ccs_/);
  t.like(s, {
    tenant_id: e.app.tenantId,
    field_key: 'department',
    display_label: 'Department',
    field_type: 'string',
    cardinality: 'one',
    is_pii: 1,
    is_required: 0,
    is_active: 1,
    is_system: 0,
    operation_status: 'active',
  });
  t.deepEqual(s.field_usage_bindings, [{ token_type: 'id_token' }]);
  t.true(Number.isInteger(s.created_at) && s.created_at >= before && s.updated_at === s.created_at);
  const got = await call('GET', `${BASE}/${s.id}`, admin);
  t.is(got.status, 200);
  t.deepEqual(got.body, s);
  const list = await call('GET', BASE, admin);
  t.deepEqual(list.body.schemas.at(-1), s);
  // The platform admin reaches the same tenant with ?tenant_id=.
  const viaPlatform = await call('GET', `${BASE}/${s.id}?tenant_id=${e.app.tenantId}`, platform);
  t.deepEqual(viaPlatform.body, s);
  // Isolation: another tenant's schema id is not found in this tenant.
  t.is((await call('GET', `${BASE}/${otherSchemaId}`, admin)).status, 404);
  t.is((await call('POST', `${BASE}/${otherSchemaId}/deactivate`, admin)).status, 404);
  t.is((await call('GET', `${BASE}/${otherSchemaId}?tenant_id=${otherTenantId}`, platform)).body.field_key, 'badge');
  t.is((await call('GET', `${BASE}/ccs_nope`, admin)).status, 404);
});

test.serial('create refusals: key pattern, reserved names, duplicate, type, cardinality, bindings', async (t) => {
  const base = { display_label: 'L', field_type: 'string' };
  for (const key of ['Department', '1dept', '_dept', 'dept-x', 'dept x', 'a'.repeat(65), '']) {
    const r = await create({ ...base, field_key: key });
    t.is(r.status, 400, key);
    t.is(r.body.error, 'invalid_claim_key', key);
    t.regex(r.body.message, /^field_key: /);
  }
  t.is((await create({ ...base, field_key: 'a'.repeat(64) })).status, 201, '64 characters is the bound');
  for (const key of ['sub', 'iss', 'exp', 'email', 'given_name', 'phone_number', 'auth_time', 'nonce', 'acr', 'amr']
    .concat(['azp', 'at_hash', 'c_hash', 'sid', 'scope', 'client_id', 'cnf', 'act', 'may_act'])
    .concat(['authorization_details', 'tenant_id'])) {
    const r = await create({ ...base, field_key: key });
    t.is(r.status, 400, key);
    t.is(r.body.error, 'reserved_claim_key', key);
  }
  const dup = await create({ ...base, field_key: 'department' });
  t.is(dup.status, 409);
  t.is(dup.body.error, 'claim_key_conflict');
  // The same key in another tenant is fine.
  t.is((await create({ ...base, field_key: 'department' }, platform, `?tenant_id=${otherTenantId}`)).status, 201);
  const cases: [Record<string, unknown>, string][] = [
    [{ field_type: 'integer' }, 'field_type'],
    [{ cardinality: 'several' }, 'cardinality'],
    [{ is_pii: 2 }, 'is_pii'],
    [{ display_label: '' }, 'display_label'],
    [{ field_usage_bindings: [{ token_type: 'refresh_token' }] }, 'field_usage_bindings'],
    [{ field_usage_bindings: [{ token_type: 'id_token', scopes: [] }] }, 'field_usage_bindings'],
    [
      { field_usage_bindings: Array.from({ length: LIMITS.bindings + 1 }, () => ({ token_type: 'id_token' })) },
      'field_usage_bindings',
    ],
  ];
  for (const [patch, field] of cases) {
    const r = await create({ ...base, field_key: 'valid_key', ...patch });
    t.is(r.status, 400, field);
    t.is(r.body.error, 'invalid_request', field);
    t.true(String(r.body.message).includes(field), r.body.message);
  }
  t.is(
    (await call('GET', BASE, admin)).body.schemas.some((s: any) => s.field_key === 'valid_key'),
    false,
  );
});

test.serial(`a tenant has at most ${LIMITS.schemasPerTenant} custom schemas: 409 claim_schema_limit`, async (t) => {
  const { ds, provisioning } = await openServices(e.db.url, e.db.dir);
  const full = await activeTenant(provisioning, { name: 'Full' }, actor);
  const claims = new CustomClaimsService(ds);
  for (let i = 0; i < LIMITS.schemasPerTenant; i++) {
    await claims.createSchema(full.id, { field_key: `k${i}`, display_label: 'K', field_type: 'number' }, actor);
  }
  await ds.destroy();
  const r = await create(
    { field_key: 'one_more', display_label: 'K', field_type: 'number' },
    platform,
    `?tenant_id=${full.id}`,
  );
  t.is(r.status, 409);
  t.is(r.body.error, 'claim_schema_limit');
  const list = await call('GET', `${BASE}?tenant_id=${full.id}`, platform);
  t.is(list.body.schemas.length, LIMITS.schemasPerTenant + 2, 'the system schemas do not count');
});

test.serial('deactivate: kept, is_active 0, idempotent; refused while an operation runs', async (t) => {
  const s = (await create({ field_key: 'legacy_code', display_label: 'Legacy', field_type: 'string' })).body;
  const busy = (await create({ field_key: 'busy_one', display_label: 'Busy', field_type: 'string' })).body;
  const d = await call('POST', `${BASE}/${s.id}/deactivate`, admin);
  t.is(d.status, 200);
  t.is(d.body.is_active, 0);
  t.is(d.body.field_key, 'legacy_code');
  const again = await call('POST', `${BASE}/${s.id}/deactivate`, admin);
  t.is(again.status, 200);
  t.is(again.body.is_active, 0);
  t.is((await call('GET', `${BASE}/${s.id}`, admin)).body.is_active, 0);
  await sql(e.db.url, e.db.dir, "UPDATE custom_claim_schemas SET operation_status = 'renaming' WHERE id = ?", [
    busy.id,
  ]);
  const refused = await call('POST', `${BASE}/${busy.id}/deactivate`, admin);
  t.is(refused.status, 409);
  t.is(refused.body.error, 'claim_operation_in_progress');
  t.is((await call('GET', `${BASE}/${busy.id}`, admin)).body.operation_status, 'renaming');
  await sql(e.db.url, e.db.dir, "UPDATE custom_claim_schemas SET operation_status = 'active' WHERE id = ?", [busy.id]);
});

test.serial('update (PATCH): label, flags and bindings change; key, type and cardinality do not', async (t) => {
  const s = (
    await create({ field_key: 'nickname_x', display_label: 'Nick', field_type: 'string', cardinality: 'many' })
  ).body;
  const patch = (body: unknown, id = s.id, token = admin) => call('PATCH', `${BASE}/${id}`, token, body);
  const r = await patch({
    display_label: 'Nickname',
    is_pii: 1,
    field_usage_bindings: [{ token_type: 'userinfo', scopes: ['profile'], note: 'kept' }],
  });
  t.is(r.status, 200);
  t.like(r.body, { id: s.id, field_key: 'nickname_x', display_label: 'Nickname', is_pii: 1, cardinality: 'many' });
  t.deepEqual(r.body.field_usage_bindings, [{ token_type: 'userinfo', scopes: ['profile'], note: 'kept' }]);
  t.true(r.body.updated_at >= s.updated_at);
  t.deepEqual((await call('GET', `${BASE}/${s.id}`, admin)).body, r.body);
  // Deactivate, then reactivate with is_active 1.
  t.is((await call('POST', `${BASE}/${s.id}/deactivate`, admin)).status, 200);
  t.is((await patch({ is_active: 1 })).body.is_active, 1);
  for (const [body, field] of [
    [{ field_key: 'other_key' }, 'field_key'],
    [{ field_type: 'number' }, 'field_type'],
    [{ cardinality: 'one' }, 'cardinality'],
    [{ is_required: 'yes' }, 'is_required'],
    [{ field_usage_bindings: [{ token_type: 'saml' }] }, 'field_usage_bindings'],
    [{}, 'name at least one of'],
  ] as [Record<string, unknown>, string][]) {
    const x = await patch(body);
    t.is(x.status, 400, field);
    t.is(x.body.error, 'invalid_request', field);
    t.true(String(x.body.message).includes(field), x.body.message);
  }
  const email = (await call('GET', BASE, admin)).body.schemas[0];
  const sys = await patch({ display_label: 'Mail' }, email.id);
  t.is(sys.status, 409);
  t.is(sys.body.error, 'system_claim_schema');
  t.is((await patch({ display_label: 'X' }, otherSchemaId)).status, 404, "another tenant's schema");
  await sql(e.db.url, e.db.dir, "UPDATE custom_claim_schemas SET operation_status = 'renaming' WHERE id = ?", [s.id]);
  const busy = await patch({ display_label: 'Busy' });
  t.is(busy.status, 409);
  t.is(busy.body.error, 'claim_operation_in_progress');
  await sql(e.db.url, e.db.dir, "UPDATE custom_claim_schemas SET operation_status = 'active' WHERE id = ?", [s.id]);
  const audit = await call('GET', `/api/admin/audit?action=custom_claim.update&target_id=${s.id}`, admin);
  t.true(
    audit.body.events.some(
      (ev: any) => ev.summary?.before?.display_label === 'Nick' && ev.summary?.after?.display_label === 'Nickname',
    ),
  );
});

test.serial("a user's values: set and get, validated against the schemas", async (t) => {
  for (const [key, type, cardinality] of [
    ['level', 'number', 'one'],
    ['is_manager', 'boolean', 'one'],
    ['hired_on', 'date', 'one'],
    ['backup_email', 'email', 'one'],
    ['roles', 'string', 'many'],
  ]) {
    t.is((await create({ field_key: key, display_label: key, field_type: type, cardinality })).status, 201, key);
  }
  const u = await createUserIn(e, 'values');
  const good = {
    department: 'Sales',
    level: 3.5,
    is_manager: false,
    hired_on: '2024-02-29',
    backup_email: ' Ada@Example.COM ',
    roles: ['admin', 'auditor'],
  };
  const r = await putClaims(u.id, good);
  t.is(r.status, 200);
  t.deepEqual(r.body.claims, { ...good, backup_email: 'ada@example.com' });
  t.deepEqual(r.body.system_claims, { email: u.email, name: r.body.system_claims.name });
  const got = await call('GET', userPath(u.id), admin);
  t.is(got.status, 200);
  t.deepEqual(got.body.claims, { ...good, backup_email: 'ada@example.com' });

  const refusals: [Record<string, unknown>, string, string][] = [
    [{ nope: 1 }, 'unknown_claim', 'claims.nope'],
    [{ badge: 'x' }, 'unknown_claim', 'claims.badge'], // another tenant's key
    [{ legacy_code: 'x' }, 'inactive_claim', 'claims.legacy_code'],
    [{ email: 'x@example.com' }, 'system_claim', 'claims.email'],
    [{ department: 5 }, 'invalid_claim_value', 'claims.department'],
    [{ department: 'x'.repeat(LIMITS.stringLength + 1) }, 'invalid_claim_value', 'claims.department'],
    [{ level: '3' }, 'invalid_claim_value', 'claims.level'],
    [{ is_manager: 'yes' }, 'invalid_claim_value', 'claims.is_manager'],
    [{ hired_on: '2023-02-29' }, 'invalid_claim_value', 'claims.hired_on'],
    [{ hired_on: '2024-02-29T10:00:00Z' }, 'invalid_claim_value', 'claims.hired_on'],
    [{ backup_email: 'not-an-address' }, 'invalid_claim_value', 'claims.backup_email'],
    [{ roles: 'admin' }, 'invalid_claim_value', 'claims.roles'],
    [{ roles: ['admin', 7] }, 'invalid_claim_value', 'claims.roles'],
    [{ roles: Array.from({ length: LIMITS.manyItems + 1 }, (_, i) => `r${i}`) }, 'invalid_claim_value', 'claims.roles'],
    [{ level: [1] }, 'invalid_claim_value', 'claims.level'],
  ];
  for (const [claims, code, field] of refusals) {
    const x = await putClaims(u.id, claims);
    t.is(x.status, 400, JSON.stringify(claims).slice(0, 80));
    t.is(x.body.error, code, JSON.stringify(claims).slice(0, 80));
    t.true(String(x.body.message).startsWith(`${field}:`), x.body.message);
  }
  t.is((await putClaims(u.id, { roles: Array.from({ length: LIMITS.manyItems }, (_, i) => `r${i}`) })).status, 200);
  const body = await call('PUT', userPath(u.id), admin, { department: 'bare map' });
  t.is(body.status, 400, 'the body is {claims: {...}}');
  // A refused write changed nothing.
  t.is((await call('GET', userPath(u.id), admin)).body.claims.roles.length, LIMITS.manyItems);
  // PUT replaces: a key left out loses its value; null is no value.
  const replaced = await putClaims(u.id, { department: 'Ops', level: null });
  t.deepEqual(replaced.body.claims, { department: 'Ops' });
  t.deepEqual((await call('GET', userPath(u.id), admin)).body.claims, { department: 'Ops' });

  t.is((await putClaims('usr_nope', { department: 'x' })).status, 404);
  const foreign = await putClaims(otherUserId, { department: 'x' }, platform);
  t.is(foreign.status, 404, "another tenant's user is not found through this tenant");
  t.is((await call('GET', userPath(otherUserId), platform)).status, 404);
  t.is((await call('GET', userPath('usr_nope'), admin)).status, 404);
});

test.serial('is_required: a write without a value for an active required claim is refused', async (t) => {
  const req = (await create({ field_key: 'cost_center', display_label: 'CC', field_type: 'string', is_required: 1 }))
    .body;
  const u = await createUserIn(e, 'req');
  const r = await putClaims(u.id, { department: 'Ops' });
  t.is(r.status, 400);
  t.is(r.body.error, 'missing_required_claim');
  t.regex(r.body.message, /^claims\.cost_center:/);
  t.is((await putClaims(u.id, { department: 'Ops', cost_center: 'CC-1' })).status, 200);
  // Inactive required schemas are not enforced.
  t.is((await call('POST', `${BASE}/${req.id}/deactivate`, admin)).status, 200);
  t.is((await putClaims(u.id, { department: 'Ops' })).status, 200);
});

test.serial('emission: ID token, access token and userinfo carry each claim only per its bindings', async (t) => {
  const schemas: [string, string, string, Record<string, unknown>[]][] = [
    ['in_id', 'string', 'one', [{ token_type: 'id_token' }]],
    ['in_at', 'number', 'one', [{ token_type: 'access_token' }]],
    ['in_ui_email', 'string', 'one', [{ token_type: 'userinfo', scopes: ['email'] }]],
    [
      'needs_profile',
      'string',
      'one',
      [
        { token_type: 'id_token', scopes: ['profile'] },
        { token_type: 'userinfo', scopes: ['profile', 'phone'] },
      ],
    ],
    [
      'everywhere',
      'string',
      'many',
      [{ token_type: 'id_token' }, { token_type: 'access_token' }, { token_type: 'userinfo' }],
    ],
    ['unbound', 'string', 'one', []],
    ['switched_off', 'string', 'one', [{ token_type: 'id_token' }, { token_type: 'userinfo' }]],
  ];
  const ids: Record<string, string> = {};
  for (const [key, type, cardinality, bindings] of schemas) {
    const r = await create({
      field_key: key,
      display_label: key,
      field_type: type,
      cardinality,
      field_usage_bindings: bindings,
    });
    t.is(r.status, 201, key);
    ids[key] = r.body.id;
  }
  const u = await createUserIn(e, 'emit');
  const w = await putClaims(u.id, {
    in_id: 'id-only',
    in_at: 42,
    in_ui_email: 'ui-only',
    needs_profile: 'never',
    everywhere: ['a', 'b'],
    unbound: 'nowhere',
    switched_off: 'gone',
  });
  t.is(w.status, 200);
  t.is((await call('POST', `${BASE}/${ids.switched_off}/deactivate`, admin)).status, 200);

  // The login grants `openid email` (test/helpers/login.ts), not profile.
  const tokens = await kit.tokensFor(e.app.web, u.email);
  const id = payload(tokens.id_token);
  const at = payload(tokens.access_token);
  const ui = (await (await kit.userinfo(tokens.access_token)).json()) as Record<string, unknown>;
  const pick = (o: Record<string, unknown>) =>
    Object.fromEntries(
      Object.keys(o)
        .filter((k) => k in w.body.claims)
        .sort()
        .map((k) => [k, o[k]]),
    );
  t.deepEqual(pick(id), { everywhere: ['a', 'b'], in_id: 'id-only' });
  t.deepEqual(pick(at), { everywhere: ['a', 'b'], in_at: 42 });
  t.deepEqual(pick(ui), { everywhere: ['a', 'b'], in_ui_email: 'ui-only' });
  // The protocol and standard claims are untouched.
  t.is(id.sub, u.id);
  t.is(id.email, u.email);
  t.is(at.sub, u.id);
  t.is(ui.sub, u.id);
  t.is(ui.email, u.email);

  // A change of value shows in the next token: nothing is cached.
  t.is((await putClaims(u.id, { in_id: 'changed', everywhere: [] })).status, 200);
  const next = await kit.refresh(tokens.refresh_token, e.app.web);
  t.is(next.status, 200);
  t.deepEqual(pick(payload(next.body.access_token)), { everywhere: [] });
  const ui2 = (await (await kit.userinfo(next.body.access_token)).json()) as Record<string, unknown>;
  t.deepEqual(pick(ui2), { everywhere: [] });
});

test.serial("the data export's custom_claims lists the user's values, inactive schemas' too", async (t) => {
  const u = await createUserIn(e, 'export');
  t.is((await putClaims(u.id, { department: 'Legal', roles: ['x', 'y'] })).status, 200);
  await sql(
    e.db.url,
    e.db.dir,
    'INSERT INTO custom_claim_values (tenant_id, user_id, field_key, value_json, updated_at) ' +
      `VALUES (?, ?, 'legacy_code', '"L-1"', 1)`,
    [e.app.tenantId, u.id],
  );
  const tokens = await kit.tokensFor(e.app.web, u.email, ACCOUNT_SCOPE);
  const res = await fetch(`${e.d.url}/api/user/data-export`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.access_token}` },
    body: JSON.stringify({ sections: ['custom_claims'] }),
  });
  t.is(res.status, 200);
  const body = (await res.json()) as Record<string, any>;
  t.deepEqual(body.data.custom_claims, [
    { key: 'department', label: 'Department', active: true, value: 'Legal' },
    { key: 'legacy_code', label: 'Legacy', active: false, value: 'L-1' },
    { key: 'roles', label: 'roles', active: true, value: ['x', 'y'] },
  ]);
  const csv = await fetch(`${e.d.url}/api/user/data-export`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.access_token}` },
    body: JSON.stringify({ sections: ['custom_claims'], format: 'csv' }),
  });
  const text = String(((await csv.json()) as Record<string, any>).data.csv);
  t.true(text.includes('key,label,active,value\r\n'), text);
  t.true(text.includes('department,Department,true,Legal\r\n'), text);
});

test.serial('audit: schema create and deactivate and value writes are recorded, without values', async (t) => {
  const events = async (action: string) =>
    (await call('GET', `/api/admin/audit?action=${action}&limit=200`, admin)).body.events as Record<string, any>[];
  const created = await events('custom_claim.create');
  t.true(created.some((ev) => ev.summary?.after?.field_key === 'department'));
  t.true((await events('custom_claim.deactivate')).some((ev) => ev.summary?.field_key === 'legacy_code'));
  const writes = await events('user.claims.update');
  t.true(writes.length > 0);
  t.false(JSON.stringify(writes).includes('Legal'), 'values are not in the audit log');
  t.true(writes.some((ev) => Array.isArray(ev.summary?.keys) && ev.summary.keys.includes('department')));
});
