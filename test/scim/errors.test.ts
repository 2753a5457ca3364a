/**
 * SCIM errors (RFC 7644 §3.12): each refusal answers the SCIM error object with the right
 * status and scimType, and writes nothing; a token without the scope scim is refused.
 */
import test from 'ava';
import { api, type ApiAnswer } from '../helpers/api.js';
import { SCIM_ERROR, SCIM_PATCH_OP, SCIM_USER, startScim, type ScimEnv } from '../helpers/scim.js';

let e: ScimEnv;
let id: string;
let etag: string;

test.before(async () => {
  e = await startScim();
  const r = await e.scim('POST', '/Users', {
    schemas: [SCIM_USER],
    userName: 'kept@example.com',
    externalId: 'ext-1',
    name: { givenName: 'Kept', familyName: 'User' },
  });
  if (r.status !== 201) throw new Error(r.text);
  id = r.body.id as string;
  etag = r.headers.get('etag')!;
});
test.after.always(async () => {
  await e?.stop();
});

function scimError(t: import('ava').ExecutionContext, r: ApiAnswer, status: number, scimType?: string) {
  t.is(r.status, status, r.text);
  t.regex(r.headers.get('content-type') ?? '', /^application\/scim\+json/);
  t.deepEqual(r.body.schemas, [SCIM_ERROR]);
  t.is(r.body.status, String(status));
  t.is(r.body.scimType, scimType);
  t.is(typeof r.body.detail, 'string');
}

/** Nothing was written: the one user is as created, and no other user exists. */
async function unchanged(t: import('ava').ExecutionContext) {
  const list = await e.scim('GET', '/Users');
  t.is(list.body.totalResults, 1);
  const got = await e.scim('GET', `/Users/${id}`);
  t.is(got.headers.get('etag'), etag);
}

const patch = (Operations: unknown[], headers: Record<string, string> = {}) =>
  e.scim('PATCH', `/Users/${id}`, { schemas: [SCIM_PATCH_OP], Operations }, headers);

test.serial('discovery answers in application/scim+json; an unknown path is a SCIM 404', async (t) => {
  const r = await e.scim('GET', '/ServiceProviderConfig');
  t.is(r.status, 200);
  t.like(r.body, { patch: { supported: true }, bulk: { supported: false }, etag: { supported: true } });
  t.is(r.body.filter.maxResults, 200);
  t.is(r.body.authenticationSchemes[0].type, 'oauthbearertoken');
  const s = await e.scim('GET', '/Schemas');
  t.deepEqual(
    s.body.Resources.map((x: { id: string }) => x.id),
    [
      SCIM_USER,
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
      'urn:ietf:params:scim:schemas:core:2.0:Group',
    ],
  );
  const userName = s.body.Resources[0].attributes.find((a: { name: string }) => a.name === 'userName');
  t.like(userName, { type: 'string', required: true, caseExact: false, uniqueness: 'server', mutability: 'readWrite' });
  const rt = await e.scim('GET', '/ResourceTypes');
  t.deepEqual(
    rt.body.Resources.map((x: { id: string }) => x.id),
    ['User', 'Group'],
  );
  scimError(t, await e.scim('GET', '/Nope'), 404);
});

test.serial('filters: malformed, unknown attribute, wrong comparison → 400 invalidFilter', async (t) => {
  for (const f of [
    'userName eq',
    'userName xx "a"',
    '(userName eq "a"',
    'nosuch eq "a"',
    'name.nosuch eq "a"',
    'active gt true',
    // A User is rendered without `groups` (readOnly, docs/scim.md): refused, not an empty list.
    'groups.value eq "grp_1"',
    'userName eq "a" and groups pr',
  ])
    scimError(t, await e.scim('GET', `/Users?filter=${encodeURIComponent(f)}`), 400, 'invalidFilter');
  scimError(t, await e.scim('GET', `/Users?filter=${'x'.repeat(5000)}`), 400, 'invalidFilter');
  scimError(t, await e.scim('GET', '/Users?count=abc'), 400, 'invalidValue');
  scimError(t, await e.scim('GET', '/Users?attributes=nosuch'), 400, 'invalidValue');
});

test.serial('bodies: wrong types and a missing userName are 400 invalidValue; nothing is created', async (t) => {
  const base = { schemas: [SCIM_USER], userName: 'new@example.com' };
  scimError(t, await e.scim('POST', '/Users', { ...base, active: 'maybe' }), 400, 'invalidValue');
  scimError(t, await e.scim('POST', '/Users', { ...base, userName: 42 }), 400, 'invalidValue');
  scimError(t, await e.scim('POST', '/Users', { ...base, emails: 'x@example.com' }), 400, 'invalidValue');
  scimError(t, await e.scim('POST', '/Users', { ...base, name: { nosuch: 'x' } }), 400, 'invalidValue');
  scimError(t, await e.scim('POST', '/Users', { schemas: [SCIM_USER] }), 400, 'invalidValue');
  // No sign-in address: no primary or work email, and a userName that is not one.
  scimError(t, await e.scim('POST', '/Users', { schemas: [SCIM_USER], userName: 'noaddress' }), 400, 'invalidValue');
  // Not JSON, and not JSON's media type.
  const raw = await api(e.d.url, 'POST', '/scim/v2/Users', {
    token: e.token,
    raw: '{"userName":',
    headers: { 'content-type': 'application/scim+json' },
  });
  scimError(t, raw, 400, 'invalidSyntax');
  const text = await api(e.d.url, 'POST', '/scim/v2/Users', {
    token: e.token,
    raw: 'userName=x',
    headers: { 'content-type': 'text/plain' },
  });
  t.is(text.status, 415);
  t.deepEqual(text.body.schemas, [SCIM_ERROR]);
  await unchanged(t);
});

test.serial('uniqueness: userName (any case) and externalId taken → 409 uniqueness', async (t) => {
  const dup = { schemas: [SCIM_USER], emails: [{ value: 'other@example.com', primary: true }] };
  scimError(t, await e.scim('POST', '/Users', { ...dup, userName: 'KEPT@example.com' }), 409, 'uniqueness');
  scimError(t, await e.scim('POST', '/Users', { ...dup, userName: 'other', externalId: 'ext-1' }), 409, 'uniqueness');
  await unchanged(t);
});

test.serial('PATCH into readOnly attributes → 400 mutability; bad paths and ops; nothing written', async (t) => {
  scimError(t, await patch([{ op: 'replace', path: 'id', value: 'usr_x' }]), 400, 'mutability');
  scimError(
    t,
    await patch([{ op: 'Replace', path: 'meta.created', value: '2020-01-01T00:00:00Z' }]),
    400,
    'mutability',
  );
  scimError(t, await patch([{ op: 'Add', path: 'groups', value: [{ value: 'grp_x' }] }]), 400, 'mutability');
  scimError(t, await patch([{ op: 'replace', value: { meta: { version: 'x' } } }]), 400, 'mutability');
  // The first operation is valid; the second refused: neither is applied.
  const both = await patch([
    { op: 'replace', path: 'title', value: 'Boss' },
    { op: 'replace', path: 'nosuch', value: 'x' },
  ]);
  scimError(t, both, 400, 'invalidPath');
  scimError(t, await patch([{ op: 'replace', path: 'emails[type eq ]', value: 'x' }]), 400, 'invalidFilter');
  scimError(t, await patch([{ op: 'Remove' }]), 400, 'noTarget');
  scimError(t, await patch([{ op: 'move', path: 'title', value: 'x' }]), 400, 'invalidSyntax');
  scimError(t, await patch([{ op: 'replace', path: 'active', value: 'perhaps' }]), 400, 'invalidValue');
  scimError(t, await e.scim('PATCH', `/Users/${id}`, { Operations: [] }), 400, 'invalidSyntax');
  await unchanged(t);
});

test.serial('If-Match: a stale ETag is 412 on PUT, PATCH and DELETE; the current one passes', async (t) => {
  const stale = { 'if-match': 'W/"stale"' };
  scimError(t, await patch([{ op: 'replace', path: 'title', value: 'Boss' }], stale), 412);
  const put = await e.scim('PUT', `/Users/${id}`, { schemas: [SCIM_USER], userName: 'kept@example.com' }, stale);
  scimError(t, put, 412);
  scimError(t, await e.scim('DELETE', `/Users/${id}`, undefined, stale), 412);
  await unchanged(t);
  const ok = await patch([{ op: 'replace', path: 'title', value: 'Boss' }], { 'if-match': etag });
  t.is(ok.status, 200);
  t.is(ok.body.title, 'Boss');
  t.not(ok.headers.get('etag'), etag);
  etag = ok.headers.get('etag')!;
});

test.serial(
  'authentication: no token 401, an admin token without scim 403, both SCIM errors with WWW-Authenticate',
  async (t) => {
    const none = await api(e.d.url, 'GET', '/scim/v2/Users');
    scimError(t, none, 401);
    t.regex(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    const admin = await api(e.d.url, 'GET', '/scim/v2/Users', { token: e.adminToken });
    scimError(t, admin, 403);
    t.regex(admin.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    // scim is an admin scope: refused on a client that may act for users (docs/scopes.md).
    const client = await api(e.d.url, 'POST', `/api/admin/tenants/${e.tenantId}/clients`, {
      token: e.adminToken,
      body: {
        name: 'web',
        grant_types: ['authorization_code'],
        redirect_uris: ['https://a.example/cb'],
        scopes: ['scim'],
      },
    });
    t.is(client.status, 400);
    t.regex(client.text, /scim/);
    // And the SCIM token does not open the admin API.
    const other = await api(e.d.url, 'GET', `/api/admin/tenants/${e.tenantId}/users`, { token: e.token });
    t.is(other.status, 403);
    await unchanged(t);
  },
);
