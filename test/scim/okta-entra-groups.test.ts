/**
 * SCIM /Groups as Okta and Microsoft Entra ID drive it: the request sequences their SCIM 2.0
 * provisioning documentation publishes for groups (Okta: "SCIM Group operations" of its SCIM
 * 2.0 reference; Entra ID: "Group operations" of "Tutorial: Develop and plan provisioning for a
 * SCIM endpoint"), with their casing and payload shapes, each answer checked against RFC 7644
 * (status, media type, ListResponse and error shapes, meta, weak ETags). Then the filters, the
 * refusals (scimType), If-Match, one record with the admin API, two concurrent member PATCHes
 * (both kept), and the large-group rule with a small cap. One daemon.
 */
import test, { type ExecutionContext } from 'ava';
import type { ApiAnswer } from '../helpers/api.js';
import { api } from '../helpers/api.js';
import { SCIM_ERROR, SCIM_LIST, SCIM_PATCH_OP, startScim, type ScimEnv } from '../helpers/scim.js';
import { openServices } from '../helpers/seed.js';
import { GroupService } from '../../shared/services/rbac/groups.js';
import { ScimGroups } from '../../shared/services/scim/groups.js';

const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTRA_GROUP = 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group';
const actor = { type: 'system' as const, id: 'test' };

let env: ScimEnv;
let services: Awaited<ReturnType<typeof openServices>>;
const users: { id: string; name: string }[] = [];

test.before(async () => {
  env = await startScim();
  services = await openServices(env.db.url, env.db.dir);
  for (const p of ['ada', 'alan', 'grace', 'edsger', 'barbara'])
    users.push(
      await services.directory.createUser(env.tenantId, { email: `${p}@example.com`, name: `${p} test` }, actor),
    );
});
test.after.always(async () => {
  await services?.ds.destroy();
  await env?.stop();
});

const patchOp = (...Operations: unknown[]) => ({ schemas: [SCIM_PATCH_OP], Operations });
const memberIds = (r: ApiAnswer) => ((r.body.members ?? []) as { value: string }[]).map((m) => m.value).sort();

/** RFC 7644 §3.1, §3.14, RFC 7643 §3.1: a group answer's media type, meta and weak ETag. */
function isGroup(t: ExecutionContext, r: ApiAnswer, status = 200) {
  t.is(r.status, status, r.text);
  t.regex(r.headers.get('content-type') ?? '', /^application\/scim\+json/);
  t.deepEqual(r.body.schemas, [GROUP]);
  t.regex(r.body.id, /^grp_/);
  t.like(r.body.meta, { resourceType: 'Group', location: `${env.d.url}/scim/v2/Groups/${r.body.id}` });
  t.regex(r.body.meta.version, /^W\/"\d+"$/);
  t.is(r.headers.get('etag'), r.body.meta.version);
  t.false(Number.isNaN(Date.parse(r.body.meta.created)));
  t.false(Number.isNaN(Date.parse(r.body.meta.lastModified)));
}

/** RFC 7644 §3.4.2: a ListResponse. */
function isList(t: ExecutionContext, r: ApiAnswer, total: number) {
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.schemas, [SCIM_LIST]);
  t.is(r.body.totalResults, total);
  t.is(r.body.itemsPerPage, r.body.Resources.length);
  t.is(typeof r.body.startIndex, 'number');
}

/** RFC 7644 §3.12: the error object. */
function isError(t: ExecutionContext, r: ApiAnswer, status: number, scimType?: string) {
  t.is(r.status, status, r.text);
  t.deepEqual(r.body.schemas, [SCIM_ERROR]);
  t.is(r.body.status, String(status));
  if (scimType) t.is(r.body.scimType, scimType);
}

test.serial('Okta: list, create, find by displayName, get, rename, add and remove members, PUT, delete', async (t) => {
  const [u1, u2] = users;
  isList(t, await env.scim('GET', '/Groups?startIndex=1&count=100'), 0);
  const created = await env.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Test SCIMv2', members: [] });
  isGroup(t, created, 201);
  t.is(created.headers.get('location'), created.body.meta.location);
  t.is(created.body.displayName, 'Test SCIMv2');
  t.is(created.body.meta.version, 'W/"1"');
  const id = created.body.id as string;

  const found = await env.scim(
    'GET',
    `/Groups?filter=${encodeURIComponent('displayName eq "Test SCIMv2"')}&startIndex=1&count=100`,
  );
  isList(t, found, 1);
  t.is(found.body.Resources[0].id, id);
  isGroup(t, await env.scim('GET', `/Groups/${id}`));

  // Okta's rename: replace without path, the group's own id beside the new name.
  const renamed = await env.scim(
    'PATCH',
    `/Groups/${id}`,
    patchOp({ op: 'replace', value: { id, displayName: 'Test SCIMv2 renamed' } }),
  );
  isGroup(t, renamed);
  t.is(renamed.body.displayName, 'Test SCIMv2 renamed');

  const added = await env.scim(
    'PATCH',
    `/Groups/${id}`,
    patchOp({ op: 'add', path: 'members', value: [{ value: u1.id, display: 'ada@example.com' }] }),
  );
  isGroup(t, added);
  t.deepEqual(added.body.members, [
    { value: u1.id, display: u1.name, $ref: `${env.d.url}/scim/v2/Users/${u1.id}`, type: 'User' },
  ]);

  const removed = await env.scim(
    'PATCH',
    `/Groups/${id}`,
    patchOp({ op: 'remove', path: `members[value eq "${u1.id}"]` }),
  );
  isGroup(t, removed);
  t.deepEqual(memberIds(removed), []);
  // Removing a member that is not there is no error: the group is already as asked.
  t.is(
    (await env.scim('PATCH', `/Groups/${id}`, patchOp({ op: 'remove', path: `members[value eq "${u1.id}"]` }))).status,
    200,
  );

  const put = await env.scim('PUT', `/Groups/${id}`, {
    schemas: [GROUP],
    id,
    displayName: 'Test SCIMv2',
    members: [{ value: u2.id, display: 'alan@example.com' }],
  });
  isGroup(t, put);
  t.is(put.body.displayName, 'Test SCIMv2');
  t.deepEqual(memberIds(put), [u2.id]);

  const del = await env.scim('DELETE', `/Groups/${id}`);
  t.is(del.status, 204);
  t.is(del.text, '');
  isError(t, await env.scim('GET', `/Groups/${id}`), 404);
});

test.serial('Entra ID: create with externalId, get and find without members, Replace/Add/Remove, delete', async (t) => {
  const [u1, u2] = users;
  const created = await env.scim('POST', '/Groups', {
    schemas: [GROUP, ENTRA_GROUP],
    externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
    displayName: 'displayName',
    meta: { resourceType: 'Group' },
  });
  isGroup(t, created, 201);
  t.is(created.body.externalId, '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159');
  const id = created.body.id as string;
  await env.scim(
    'PATCH',
    `/Groups/${id}`,
    patchOp({ op: 'Add', path: 'members', value: [{ $ref: null, value: u2.id }] }),
  );

  const got = await env.scim('GET', `/Groups/${id}?excludedAttributes=members`);
  isGroup(t, got);
  t.is(got.body.members, undefined);
  const found = await env.scim(
    'GET',
    `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "displayName"')}`,
  );
  isList(t, found, 1);
  t.is(found.body.Resources[0].id, id);
  t.is(found.body.Resources[0].members, undefined);
  t.is(found.body.startIndex, 1);

  const replaced = await env.scim(
    'PATCH',
    `/Groups/${id}`,
    patchOp({ op: 'Replace', path: 'displayName', value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName' }),
  );
  isGroup(t, replaced);
  t.is(replaced.body.displayName, '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName');

  const added = await env.scim(
    'PATCH',
    `/Groups/${id}`,
    patchOp({ op: 'Add', path: 'members', value: [{ $ref: null, value: u1.id }] }),
  );
  t.deepEqual(memberIds(added), [u1.id, u2.id].sort());
  const removed = await env.scim(
    'PATCH',
    `/Groups/${id}`,
    patchOp({ op: 'Remove', path: 'members', value: [{ $ref: null, value: u1.id }] }),
  );
  t.deepEqual(memberIds(removed), [u2.id]);
  t.is((await env.scim('DELETE', `/Groups/${id}`)).status, 204);
});

test.serial(
  'filters: id, externalId, displayName without case, members[value eq], meta.lastModified gt, paging',
  async (t) => {
    const [u1, u2, u3] = users;
    const mk = async (displayName: string, externalId: string, members: string[]) =>
      (
        await env.scim('POST', '/Groups', {
          schemas: [GROUP],
          displayName,
          externalId,
          members: members.map((value) => ({ value })),
        })
      ).body as { id: string; meta: { lastModified: string } };
    const a = await mk('Filter A', 'fa', [u1.id, u2.id]);
    const b = await mk('Filter B', 'fb', [u2.id]);
    const c = await mk('Filter C', 'fc', [u3.id]);
    const q = async (filter: string, extra = '') =>
      (
        (await env.scim('GET', `/Groups?filter=${encodeURIComponent(filter)}${extra}`)).body.Resources as {
          id: string;
        }[]
      )
        .map((r) => r.id)
        .sort();
    t.deepEqual(await q(`id eq "${b.id}"`), [b.id]);
    t.deepEqual(await q('externalId eq "fc"'), [c.id]);
    t.deepEqual(await q('externalId eq "FC"'), [], 'externalId is caseExact');
    t.deepEqual(await q('displayName eq "filter a"'), [a.id], 'displayName is not caseExact');
    t.deepEqual(await q(`members[value eq "${u2.id}"]`), [a.id, b.id].sort());
    t.deepEqual(await q(`members[value eq "${u2.id}"] and displayName sw "Filter B"`), [b.id]);
    t.deepEqual(await q(`members[value eq "${u1.id}"] or members[value eq "${u3.id}"]`), [a.id, c.id].sort());
    t.deepEqual(
      await q(`meta.lastModified gt "${a.meta.lastModified}" and displayName sw "Filter"`),
      [b.id, c.id].sort(),
    );
    t.deepEqual(await q('displayName co "ilter" and not (externalId eq "fb")'), [a.id, c.id].sort());
    const page = await env.scim(
      'GET',
      `/Groups?filter=${encodeURIComponent('displayName sw "Filter"')}&startIndex=2&count=1`,
    );
    isList(t, page, 3);
    t.is(page.body.startIndex, 2);
    t.is(page.body.itemsPerPage, 1);
    const only = await env.scim('GET', `/Groups/${a.id}?attributes=displayName`);
    t.deepEqual(Object.keys(only.body).sort(), ['displayName', 'id', 'meta', 'schemas']);

    isError(t, await env.scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq')}`), 400, 'invalidFilter');
    isError(t, await env.scim('GET', `/Groups?filter=${encodeURIComponent('shoeSize eq "9"')}`), 400, 'invalidFilter');
    for (const g of [a, b, c]) await env.scim('DELETE', `/Groups/${g.id}`);
  },
);

test.serial(
  'refusals: uniqueness, unknown member, readOnly and unknown paths, If-Match 412; nothing written',
  async (t) => {
    const g = await env.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Refusals' });
    const id = g.body.id as string;
    isError(t, await env.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'REFUSALS' }), 409, 'uniqueness');
    isError(t, await env.scim('POST', '/Groups', { schemas: [GROUP] }), 400, 'invalidValue');
    isError(
      t,
      await env.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'X', shoeSize: 9 }),
      400,
      'invalidValue',
    );
    const p = (body: unknown, headers: Record<string, string> = {}) =>
      env.scim('PATCH', `/Groups/${id}`, body, headers);
    isError(t, await p(patchOp({ op: 'add', path: 'members', value: [{ value: 'usr_nope' }] })), 400, 'invalidValue');
    isError(t, await p(patchOp({ op: 'replace', path: 'id', value: 'grp_x' })), 400, 'mutability');
    isError(t, await p(patchOp({ op: 'replace', value: { id: 'grp_other' } })), 400, 'mutability');
    isError(t, await p(patchOp({ op: 'replace', path: 'shoeSize', value: 1 })), 400, 'invalidPath');
    isError(t, await p(patchOp({ op: 'remove', path: 'members[display eq "x"]' })), 400, 'invalidFilter');
    isError(t, await p(patchOp({ op: 'remove', path: 'displayName' })), 400, 'invalidValue');
    isError(t, await p(patchOp({ op: 'jump', path: 'displayName' })), 400, 'invalidSyntax');
    // A valid first operation and an invalid second: nothing of either is written.
    isError(
      t,
      await p(
        patchOp(
          { op: 'add', path: 'members', value: [{ value: users[0].id }] },
          { op: 'add', path: 'members', value: [{ value: 'usr_nope' }] },
        ),
      ),
      400,
      'invalidValue',
    );
    const now = await env.scim('GET', `/Groups/${id}`);
    t.is(now.body.meta.version, 'W/"1"');
    t.is(now.body.members, undefined);
    isError(t, await p(patchOp({ op: 'replace', path: 'displayName', value: 'Y' }), { 'if-match': 'W/"7"' }), 412);
    const ok = await p(patchOp({ op: 'replace', path: 'displayName', value: 'Refusals 2' }), { 'if-match': 'W/"1"' });
    isGroup(t, ok);
    t.is(ok.body.meta.version, 'W/"2"');
    t.is((await env.scim('GET', `/Groups/${id}`, undefined, { 'if-none-match': 'W/"2"' })).status, 304);
    isError(t, await env.scim('DELETE', `/Groups/${id}`, undefined, { 'if-match': 'W/"1"' }), 412);
    isError(t, await env.scim('GET', `/Groups/${id}`, undefined, { authorization: `Bearer ${env.adminToken}` }), 403);
    t.is((await env.scim('DELETE', `/Groups/${id}`, undefined, { 'if-match': 'W/"2"' })).status, 204);
  },
);

test.serial(
  'one record: a SCIM group is in the admin API, an admin group in SCIM, with the same members',
  async (t) => {
    const admin = (method: string, path: string, body?: unknown) =>
      api(env.d.url, method, `/api/admin/tenants/${env.tenantId}${path}`, { token: env.adminToken, body });
    const s = await env.scim('POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'From SCIM',
      members: [{ value: users[0].id }],
    });
    t.like((await admin('GET', `/groups/${s.body.id}`)).body, { display_name: 'From SCIM', member_count: 1 });
    const a = await admin('POST', '/groups', { display_name: 'From admin' });
    await admin('POST', `/groups/${a.body.id}/members`, { user_ids: [users[1].id] });
    const viaScim = await env.scim('GET', `/Groups/${a.body.id}`);
    isGroup(t, viaScim);
    t.deepEqual(memberIds(viaScim), [users[1].id]);
    t.is(viaScim.body.meta.version, `W/"${a.body.version + 1}"`);
    const ev = await services.ds.query<{ actor_id: string }[]>(
      "SELECT actor_id FROM audit_events WHERE target_id = ? AND action = 'group.create'",
      [s.body.id],
    );
    t.is(ev.length, 1);
    t.regex(ev[0].actor_id, /./, 'the SCIM client is the actor');
  },
);

test.serial("two concurrent PATCHes of one group's members: both applied, no member lost", async (t) => {
  const g = await env.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Concurrent' });
  const id = g.body.id as string;
  const add = (ids: string[]) =>
    env.scim('PATCH', `/Groups/${id}`, patchOp({ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }));
  const rs = await Promise.all([add([users[0].id, users[1].id]), add([users[2].id]), add([users[3].id, users[4].id])]);
  for (const r of rs) t.is(r.status, 200, r.text);
  const after = await env.scim('GET', `/Groups/${id}`);
  t.deepEqual(memberIds(after), users.map((u) => u.id).sort());
  t.is(after.body.meta.version, 'W/"4"', 'each PATCH bumped the version once');
  // And removals racing adds: each member row is its own statement.
  const rm = env.scim(
    'PATCH',
    `/Groups/${id}`,
    patchOp({ op: 'Remove', path: 'members', value: [{ value: users[0].id }] }),
  );
  const ad = env.scim('PATCH', `/Groups/${id}`, patchOp({ op: 'remove', path: `members[value eq "${users[4].id}"]` }));
  t.deepEqual(
    (await Promise.all([rm, ad])).map((r) => r.status),
    [200, 200],
  );
  t.deepEqual(memberIds(await env.scim('GET', `/Groups/${id}`)), [users[1].id, users[2].id, users[3].id].sort());
});

test.serial('a group over the inline cap is rendered without members; the member filter still finds it', async (t) => {
  const key = services.config.secretKey;
  const none = () => Promise.resolve([]);
  const groups = new GroupService(services.ds, key, {
    mappingSets: { naming: none },
    userLifecycle: { signOut: () => Promise.resolve({ families_revoked: 0 }) },
  });
  const scim = new ScimGroups(services.ds, groups, { membersInlineMax: 2 });
  const base = 'https://iam.example.test/scim/v2';
  const small = await groups.create(env.tenantId, { display_name: 'Cap small' }, actor, {
    members: [users[0].id, users[1].id],
  });
  const large = await groups.create(env.tenantId, { display_name: 'Cap large' }, actor, {
    members: [users[0].id, users[1].id, users[2].id],
  });
  t.is(((await scim.get(env.tenantId, small.id, base)).members as unknown[]).length, 2);
  const big = await scim.get(env.tenantId, large.id, base);
  t.is(big.members, undefined);
  t.is(big.displayName, 'Cap large');
  const q = { startIndex: 1, count: 10, projection: {} };
  const { parseFilter, GROUP_TYPE } = await import('../../shared/services/scim/index.js');
  const hit = await scim.list(
    env.tenantId,
    { ...q, filter: parseFilter(GROUP_TYPE, `members[value eq "${users[2].id}"]`) },
    base,
  );
  // users[2] is also in the group of the concurrency test (three members: over this cap too).
  const mine = hit.page.find((r) => r.id === large.id);
  t.truthy(mine);
  t.is(mine!.members, undefined, 'a list item over the cap carries no members either');
  // PATCH works whatever the size: one row.
  await scim.patch(
    env.tenantId,
    large.id,
    patchOp({ op: 'Remove', path: 'members', value: [{ value: users[2].id }] }),
    actor,
    base,
  );
  t.is(((await scim.get(env.tenantId, large.id, base)).members as unknown[]).length, 2);
});
