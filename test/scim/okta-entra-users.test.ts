/**
 * The request sequences Okta's "SCIM 2.0 protocol reference" and Microsoft Entra ID's
 * "Tutorial: Develop and plan provisioning for a SCIM endpoint" publish for users, with their
 * casing and payload shapes, each answer checked against RFC 7644: status, schemas, Location,
 * ETag, the ListResponse's members.
 */
import test from 'ava';
import { SCIM_ENTERPRISE, SCIM_LIST, SCIM_PATCH_OP, SCIM_USER, startScim, type ScimEnv } from '../helpers/scim.js';
import { api, type ApiAnswer } from '../helpers/api.js';

let e: ScimEnv;
test.before(async () => {
  e = await startScim();
});
test.after.always(async () => {
  await e?.stop();
});

/** RFC 7644 §3.3 / §3.4.1: a User resource with id, meta and a weak ETag equal to meta.version. */
function isUser(t: import('ava').ExecutionContext, r: ApiAnswer, status: number) {
  t.is(r.status, status, r.text);
  t.regex(r.headers.get('content-type') ?? '', /^application\/scim\+json/);
  t.true((r.body.schemas as string[]).includes(SCIM_USER));
  t.truthy(r.body.id);
  t.is(r.body.meta.resourceType, 'User');
  t.is(r.body.meta.location, `${e.d.url}/scim/v2/Users/${r.body.id}`);
  t.regex(r.headers.get('etag') ?? '', /^W\/".+"$/);
  t.is(r.headers.get('etag'), r.body.meta.version);
}

/** RFC 7644 §3.4.2: a ListResponse. */
function isList(t: import('ava').ExecutionContext, r: ApiAnswer, total: number) {
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.schemas, [SCIM_LIST]);
  t.is(r.body.totalResults, total);
  t.is(r.body.startIndex, 1);
  t.is(r.body.itemsPerPage, r.body.Resources.length);
}

const q = (filter: string) => `/Users?filter=${encodeURIComponent(filter)}`;

test.serial('Okta: does the user exist, create, read, replace, deactivate by PATCH, reactivate', async (t) => {
  // "Determine if the user already exists": the filter Okta sends, with startIndex and count.
  const none = await e.scim('GET', `${q('userName eq "test.user@okta.local"')}&startIndex=1&count=100`);
  isList(t, none, 0);
  t.deepEqual(none.body.Resources, []);

  // "Create the user": groups (readOnly) and password (writeOnly) are in Okta's payload.
  const created = await e.scim('POST', '/Users', {
    schemas: [SCIM_USER],
    userName: 'test.user@okta.local',
    name: { givenName: 'Test', familyName: 'User' },
    emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
    displayName: 'Test User',
    locale: 'en-US',
    externalId: '00ujl29u0le5T6Aj10h7',
    groups: [],
    password: '1mz050nq',
    active: true,
  });
  isUser(t, created, 201);
  t.is(created.headers.get('location'), created.body.meta.location);
  t.like(created.body, { userName: 'test.user@okta.local', externalId: '00ujl29u0le5T6Aj10h7', active: true });
  t.like(created.body.name, { givenName: 'Test', familyName: 'User' });
  t.is(created.body.password, undefined, 'a writeOnly attribute is never returned');
  const id = created.body.id as string;

  // "Retrieve the user" by filter (Okta's second look) and by id; If-None-Match: 304.
  const found = await e.scim('GET', `${q('userName eq "test.user@okta.local"')}&startIndex=1&count=100`);
  isList(t, found, 1);
  t.is(found.body.Resources[0].id, id);
  const got = await e.scim('GET', `/Users/${id}`);
  isUser(t, got, 200);
  const same = await e.scim('GET', `/Users/${id}`, undefined, { 'if-none-match': got.headers.get('etag')! });
  t.is(same.status, 304);

  // "Update a specific user (PUT)": the whole representation, id and meta included.
  const put = await e.scim('PUT', `/Users/${id}`, {
    ...got.body,
    name: { givenName: 'Another', familyName: 'User' },
    emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
  });
  isUser(t, put, 200);
  t.is(put.body.name.givenName, 'Another');
  t.not(put.headers.get('etag'), got.headers.get('etag'));

  // "Update a specific user (PATCH)": Okta's deactivation, a path-less replace.
  const off = await e.scim('PATCH', `/Users/${id}`, {
    schemas: [SCIM_PATCH_OP],
    Operations: [{ op: 'replace', value: { active: false } }],
  });
  isUser(t, off, 200);
  t.false(off.body.active);
  const on = await e.scim('PATCH', `/Users/${id}`, {
    schemas: [SCIM_PATCH_OP],
    Operations: [{ op: 'replace', value: { active: true } }],
  });
  t.true(on.body.active);
});

test.serial(
  'Entra ID: create, query (and no match), PATCH emails and name, userName, disable with "False", delete',
  async (t) => {
    // "Create User", the tutorial's payload (meta and an empty roles list included).
    const created = await e.scim('POST', '/Users', {
      schemas: [SCIM_USER, SCIM_ENTERPRISE],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1',
      active: true,
      emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
    });
    isUser(t, created, 201);
    t.is(created.headers.get('location'), `${e.d.url}/scim/v2/Users/${created.body.id}`);
    const id = created.body.id as string;

    // "Get User by query" and "Get User by query - Zero results".
    const byName = await e.scim('GET', q('userName eq "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1"'));
    isList(t, byName, 1);
    t.is(byName.body.Resources[0].externalId, '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef');
    const zero = await e.scim('GET', q('userName eq "non-existent user"'));
    isList(t, zero, 0);
    // Entra also matches on externalId.
    isList(t, await e.scim('GET', q('externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"')), 1);

    // "Update User [Multi-valued properties]", with the current ETag as If-Match.
    const multi = await e.scim(
      'PATCH',
      `/Users/${id}`,
      {
        schemas: [SCIM_PATCH_OP],
        Operations: [
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
          { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
        ],
      },
      { 'if-match': created.headers.get('etag')! },
    );
    isUser(t, multi, 200);
    t.is(multi.body.emails[0].value, 'updatedEmail@microsoft.com');
    t.is(multi.body.name.familyName, 'updatedFamilyName');
    // The sign-in address followed the work email: a query by it finds the user.
    isList(t, await e.scim('GET', q('emails[type eq "work"].value eq "updatedemail@microsoft.com"')), 1);

    // "Update User [Single-valued properties]".
    const single = await e.scim('PATCH', `/Users/${id}`, {
      schemas: [SCIM_PATCH_OP],
      Operations: [{ op: 'Replace', path: 'userName', value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' }],
    });
    isUser(t, single, 200);
    t.is(single.body.userName, '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com');

    // "Disable User", as Entra sends it without the feature flag: the boolean as the string "False".
    const off = await e.scim('PATCH', `/Users/${id}`, {
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      schemas: [SCIM_PATCH_OP],
    });
    isUser(t, off, 200);
    t.false(off.body.active);
    isList(t, await e.scim('GET', q('active eq false')), 1);

    // "Delete User": 204, then 404 in the SCIM error format (the tenant's default: erase).
    const del = await e.scim('DELETE', `/Users/${id}`);
    t.is(del.status, 204);
    t.is(del.text, '');
    const gone = await e.scim('GET', `/Users/${id}`);
    t.is(gone.status, 404);
    t.is(gone.body.status, '404');
  },
);

test.serial(
  'attribute mapping: claims from the enterprise extension and a custom schema; unmapped attributes refused',
  async (t) => {
    const admin = (method: string, path: string, body?: unknown) =>
      api(e.d.url, method, path, { token: e.adminToken, body });
    for (const key of ['department', 'cost_code']) {
      const c = await admin('POST', '/api/admin/custom-claims', {
        field_key: key,
        display_label: key,
        field_type: 'string',
      });
      t.is(c.status, 201, c.text);
    }
    const profile = await admin('POST', '/api/admin/field-mapping/source-profiles', {
      sourceType: 'scim',
      profileKey: 'okta',
      displayName: 'Okta',
      versionLabel: 'v1',
      schema: {},
      parserOptions: { unmappedAttributes: 'refuse' },
    });
    t.is(profile.status, 201, profile.text);
    const set = await admin('POST', '/api/admin/field-mapping/sets', {
      setKey: 'okta-users',
      displayName: 'Okta users',
      sourceType: 'scim',
      sourceProfileId: profile.body.id,
      lifecycleState: 'active',
      mappings: [
        { source: `${SCIM_ENTERPRISE}:department`, targetType: 'claim', target: 'department' },
        {
          source: 'urn:example:scim:custom:1.0:User:costCode',
          targetType: 'claim',
          target: 'cost_code',
          transform: 'uppercase',
        },
        { source: 'name.givenName', targetType: 'user', target: 'given_name' },
        // Held while the filter matches the user as stored (docs/scim.md, "Attribute mapping").
        { source: `${SCIM_ENTERPRISE}:department eq "Sales"`, targetType: 'group', target: 'Sales' },
        { source: `${SCIM_ENTERPRISE}:department eq "Sales"`, targetType: 'role', target: 'Sales rep' },
      ],
    });
    t.is(set.status, 201, set.text);
    const group = await e.scim('POST', '/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'Sales',
    });
    t.is(group.status, 201, group.text);
    const role = await admin('POST', `/api/admin/tenants/${e.tenantId}/roles`, { name: 'Sales rep' });
    t.is(role.status, 201, role.text);
    const held = async (id: string) => ({
      groups: (
        (await admin('GET', `/api/admin/tenants/${e.tenantId}/users/${id}/groups`)).body.groups as {
          display_name: string;
        }[]
      ).map((g) => g.display_name),
      roles: (
        (await admin('GET', `/api/admin/tenants/${e.tenantId}/users/${id}/roles`)).body.roles as {
          name: string;
        }[]
      ).map((r) => r.name),
    });

    const body = {
      schemas: [SCIM_USER, SCIM_ENTERPRISE, 'urn:example:scim:custom:1.0:User'],
      userName: 'mapped@example.com',
      name: { givenName: 'Mia', familyName: 'Mapped' },
      [SCIM_ENTERPRISE]: { department: 'Sales', employeeNumber: '42' },
      'urn:example:scim:custom:1.0:User': { costCode: 'cc-7' },
    };
    // An attribute outside the known schemas that no mapping names: refused, nothing written.
    const refused = await e.scim('POST', '/Users', { ...body, shoeSize: 44 });
    t.is(refused.status, 400);
    t.is(refused.body.scimType, 'invalidValue');
    t.regex(refused.body.detail, /shoeSize/);
    isList(t, await e.scim('GET', q('userName eq "mapped@example.com"')), 0);

    const created = await e.scim('POST', '/Users', body);
    isUser(t, created, 201);
    // The extension and the custom schema are kept and returned.
    t.is(created.body[SCIM_ENTERPRISE].employeeNumber, '42');
    t.deepEqual(created.body['urn:example:scim:custom:1.0:User'], { costCode: 'cc-7' });
    t.deepEqual(await held(created.body.id), { groups: ['Sales'], roles: ['Sales rep'] });
    const claims = await admin('GET', `/api/admin/tenants/${e.tenantId}/users/${created.body.id}/claims`);
    t.like(claims.body.claims, { department: 'Sales', cost_code: 'CC-7' });

    // A PATCH of the extension moves the claim with it.
    const moved = await e.scim('PATCH', `/Users/${created.body.id}`, {
      schemas: [SCIM_PATCH_OP],
      Operations: [{ op: 'Replace', path: `${SCIM_ENTERPRISE}:department`, value: 'Support' }],
    });
    isUser(t, moved, 200);
    const after = await admin('GET', `/api/admin/tenants/${e.tenantId}/users/${created.body.id}/claims`);
    t.is(after.body.claims.department, 'Support');
    // Out of Sales: the mapped group and role are no longer held.
    t.deepEqual(await held(created.body.id), { groups: [], roles: [] });
    // The role a mapping set names cannot be deleted (409 naming the set).
    const del = await admin('DELETE', `/api/admin/tenants/${e.tenantId}/roles/${role.body.id}`);
    t.is(del.status, 409, del.text);
  },
);
