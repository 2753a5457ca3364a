/**
 * Every filter example of RFC 7644 §3.4.2.2, against a seeded directory with a known answer
 * (the exact set of userNames), plus the case rules (caseExact false), the indexed lookups and
 * paging of a filtered list.
 */
import test from 'ava';
import { SCIM_ENTERPRISE, SCIM_USER, startScim, type ScimEnv } from '../helpers/scim.js';

let e: ScimEnv;

/** The directory: six users whose attributes the RFC's examples tell apart. */
const USERS = [
  {
    userName: 'john',
    name: { familyName: 'Smith' },
    title: 'Manager',
    userType: 'Employee',
    emails: [{ value: 'john@example.com', type: 'work' }],
  },
  {
    userName: 'JaneD',
    name: { familyName: "O'Malley" },
    userType: 'Intern',
    emails: [{ value: 'jane@example.org', type: 'home', primary: true }],
    ims: [{ value: 'jane@foo.com', type: 'xmpp' }],
  },
  {
    schemas: [SCIM_USER, SCIM_ENTERPRISE],
    userName: 'Jim',
    title: 'Engineer',
    userType: 'Employee',
    emails: [{ value: 'jim@example.com', type: 'work' }],
    [SCIM_ENTERPRISE]: { employeeNumber: '701984' },
  },
  {
    userName: 'bob',
    userType: 'Contractor',
    emails: [{ value: 'bob@example.org', type: 'work' }],
    ims: [{ value: 'bob@foo.com', type: 'xmpp' }],
  },
  { userName: 'alice@corp.test', userType: 'Employee' },
  { userName: 'carl', userType: 'Contractor', emails: [{ value: 'carl@example.net', type: 'work' }] },
];
const ALL = USERS.map((u) => u.userName).sort();

test.before(async () => {
  e = await startScim();
  for (const u of USERS) {
    const r = await e.scim('POST', '/Users', { schemas: [SCIM_USER], ...u });
    if (r.status !== 201) throw new Error(`seed ${u.userName}: ${r.status} ${r.text}`);
  }
});
test.after.always(async () => {
  await e?.stop();
});

async function userNames(filter: string, extra = ''): Promise<string[]> {
  const r = await e.scim('GET', `/Users?filter=${encodeURIComponent(filter)}${extra}`);
  if (r.status !== 200) throw new Error(`${filter}: ${r.status} ${r.text}`);
  return (r.body.Resources as { userName: string }[]).map((x) => x.userName).sort();
}

const EXAMPLES: [string, string[]][] = [
  ['userName Eq "john"', ['john']],
  ['name.familyName co "O\'Malley"', ['JaneD']],
  ['userName sw "J"', ['JaneD', 'Jim', 'john']],
  ['urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"', ['JaneD', 'Jim', 'john']],
  ['title pr', ['Jim', 'john']],
  ['meta.lastModified gt "2011-05-13T04:42:34Z"', ALL],
  ['meta.lastModified ge "2011-05-13T04:42:34Z"', ALL],
  ['meta.lastModified lt "2011-05-13T04:42:34Z"', []],
  ['meta.lastModified le "2011-05-13T04:42:34Z"', []],
  ['title pr and userType eq "Employee"', ['Jim', 'john']],
  ['title pr or userType eq "Intern"', ['JaneD', 'Jim', 'john']],
  ['schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"', ['Jim']],
  ['userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")', ['Jim', 'john']],
  ['userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")', ['carl']],
  ['userType eq "Employee" and (emails.type eq "work")', ['Jim', 'john']],
  ['userType eq "Employee" and emails[type eq "work" and value co "@example.com"]', ['Jim', 'john']],
  [
    'emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]',
    ['JaneD', 'Jim', 'bob', 'john'],
  ],
];

for (const [filter, expected] of EXAMPLES)
  test(`RFC 7644 §3.4.2.2: ${filter}`, async (t) => {
    t.deepEqual(await userNames(filter), [...expected].sort());
  });

test('case: caseExact=false attributes compare without case; attribute names too', async (t) => {
  t.deepEqual(await userNames('USERNAME eq "JOHN"'), ['john']);
  t.deepEqual(await userNames('emails.value ew "@EXAMPLE.ORG"'), ['JaneD', 'bob']);
  // id is caseExact: an id in the wrong case finds nobody.
  const john = await e.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "john"')}`);
  const id = john.body.Resources[0].id as string;
  t.deepEqual(await userNames(`id eq "${id}"`), ['john']);
  t.deepEqual(await userNames(`id eq "${id.toUpperCase()}"`), []);
});

test('a PATCH-style path in a filter: one element matching both, and a userName that is its address', async (t) => {
  t.deepEqual(await userNames('emails[type eq "work"].value eq "carl@example.net"'), ['carl']);
  t.deepEqual(await userNames('emails[type eq "home"].value eq "carl@example.net"'), []);
  t.deepEqual(await userNames('userName eq "alice@corp.test" and userType eq "Employee"'), ['alice@corp.test']);
});

test('paging a filtered list: totalResults counts every match, the page holds count of them', async (t) => {
  const r = await e.scim('GET', `/Users?filter=${encodeURIComponent('userType eq "Employee"')}&startIndex=2&count=1`);
  t.is(r.status, 200);
  t.like(r.body, { totalResults: 3, startIndex: 2, itemsPerPage: 1 });
  const all = await e.scim('GET', '/Users?startIndex=0&count=1000&attributes=userName');
  t.like(all.body, { totalResults: USERS.length, startIndex: 1, itemsPerPage: USERS.length });
  // Unfiltered pages (a COUNT and an indexed slice): consecutive, in the same order as the whole list.
  const names = all.body.Resources.map((u: { userName: string }) => u.userName);
  const second = await e.scim('GET', '/Users?startIndex=3&count=2&attributes=userName');
  t.like(second.body, { totalResults: USERS.length, startIndex: 3, itemsPerPage: 2 });
  t.deepEqual(
    second.body.Resources.map((u: { userName: string }) => u.userName),
    names.slice(2, 4),
  );
  const beyond = await e.scim('GET', `/Users?startIndex=${USERS.length + 1}&count=5`);
  t.like(beyond.body, { totalResults: USERS.length, itemsPerPage: 0 });
  // attributes=userName: userName, and id, schemas, meta (always returned, RFC 7643 §7).
  t.deepEqual(Object.keys(all.body.Resources[0]).sort(), ['id', 'meta', 'schemas', 'userName']);
  // An extension's URN names all of its attributes.
  const jim = await e.scim(
    'GET',
    `/Users?filter=${encodeURIComponent('userName eq "Jim"')}&excludedAttributes=${SCIM_ENTERPRISE}`,
  );
  t.is(jim.body.Resources[0][SCIM_ENTERPRISE], undefined);
  t.deepEqual(jim.body.Resources[0].schemas, [SCIM_USER]);
  const noEmails = await e.scim('GET', `/Users?count=1&excludedAttributes=emails,name`);
  t.is(noEmails.body.Resources[0].emails, undefined);
  t.truthy(noEmails.body.Resources[0].userName);
});
