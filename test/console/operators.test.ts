/**
 * Operators in the console (docs/console.md, "Operators") against one daemon: a platform
 * administrator lists, adds (a refusal of the service shown next to its field, the form kept)
 * and removes (typed confirmation of the address) operator roles, each move audited with the
 * administrator's user id; an auditor reads without the forms' links; a tenant administrator gets
 * 404; a sign-in older than five minutes is asked for again; the last platform administrator's
 * role is refused with 409, and of two removing each other at once one stays. Serial: the
 * step-up test ages Ada's sessions, and the last test may take Ada's role away.
 */
import test from 'ava';
import { OPERATORS, startConsole, type ConsoleHarness } from '../helpers/console.js';

let h: ConsoleHarness;

test.before(async () => {
  h = await startConsole();
});

test.after.always(async () => {
  await h?.close();
});

const userId = async (email: string): Promise<string | undefined> =>
  (await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ? AND tenant_id = ?', [email, h.platform]))[0]
    ?.id;

const operatorEvents = (action: string, target: string) =>
  h.ds.query<{ actor_type: string; actor_id: string }[]>(
    'SELECT actor_type, actor_id FROM audit_events WHERE action = ? AND target_id = ?',
    [action, target],
  );

test.serial('the list: a platform administrator and an auditor read it, a tenant administrator gets 404', async (t) => {
  const ada = await h.signIn(OPERATORS.ada);
  const list = await h.page('/console/operators?sort=email', ada);
  t.is(list.status, 200, list.text);
  t.regex(list.text, /<a class="button secondary" href="\/console\/operators\/new">Add operator<\/a>/);
  t.true(list.text.indexOf(OPERATORS.ada) < list.text.indexOf(OPERATORS.bob), 'sorted by email');
  t.regex(list.text, new RegExp(`>Acme</a> <code>${h.acme}</code>`), "Bob's tenant by name");
  t.regex(list.text, /href="\/console\/operators\/[^"/]+\/remove\?role=tenant-admin&amp;tenant=/);

  const carol = await h.signIn(OPERATORS.carol);
  const read = await h.page('/console/operators', carol);
  t.is(read.status, 200);
  t.regex(read.text, /auditor/);
  t.notRegex(read.text, /Add operator|Remove…/, 'an auditor is offered no move');

  const bob = await h.signIn(OPERATORS.bob);
  t.is((await h.page('/console/operators', bob)).status, 404);
  t.is((await h.page('/console/operators/new', bob)).status, 404);
});

test.serial(
  'add: the service refuses a tenant-admin without a tenant next to the field; then adds, audited',
  async (t) => {
    const ada = await h.signIn(OPERATORS.ada);
    const eve = 'eve@example.com';
    const bad = await h.submit(ada, '/console/operators/new', { email: eve, role: 'tenant-admin', tenant: '' });
    t.is(bad.status, 400);
    t.regex(bad.text, /<p id="tenant-error" class="error" role="alert">a tenant-admin names the tenant/);
    t.regex(bad.text, /value="eve@example\.com"/, 'the form keeps what was typed');
    t.regex(bad.text, /<option value="tenant-admin" selected>/);
    t.is(await userId(eve), undefined, 'nothing made');

    const done = await h.submit(ada, '/console/operators/new', { email: eve, role: 'tenant-admin', tenant: h.acme });
    t.is(done.status, 303, done.text);
    t.is(done.location, '/console/operators');
    const eveId = await userId(eve);
    t.truthy(eveId);
    const adaId = await userId(OPERATORS.ada);
    t.deepEqual(await operatorEvents('operator.add', eveId!), [{ actor_type: 'user', actor_id: adaId! }]);
    t.regex((await h.page('/console/operators', ada)).text, /eve@example\.com/);
  },
);

test.serial(
  'remove: typed confirmation of the address, audited; the last platform administrator is refused with 409',
  async (t) => {
    const ada = await h.signIn(OPERATORS.ada);
    const bobId = (await userId(OPERATORS.bob))!;
    const form = `/console/operators/${bobId}/remove?role=tenant-admin&tenant=${h.acme}`;
    const page = await h.page(form, ada);
    t.is(page.status, 200);
    t.regex(page.text, /Type the address <code>bob@example\.com<\/code> to confirm/);
    t.regex(page.text, /<a href="\/console\/operators">Cancel<\/a>/);

    const wrong = await h.submit(ada, form, { confirm: 'bob@example.org' });
    t.is(wrong.status, 400);
    t.is((await h.page('/console', await h.signIn(OPERATORS.bob))).status, 200, 'Bob is still an operator');
    // The shown address swapped for another's does not confirm this role either.
    t.is((await h.submit(ada, form, { email: OPERATORS.ada, confirm: OPERATORS.ada })).status, 400);

    const done = await h.submit(ada, form, { confirm: OPERATORS.bob });
    t.is(done.status, 303, done.text);
    const adaId = (await userId(OPERATORS.ada))!;
    t.deepEqual(await operatorEvents('operator.remove', bobId), [{ actor_type: 'user', actor_id: adaId }]);
    t.is((await h.page(form, ada)).status, 404, 'the role is gone');

    const self = `/console/operators/${adaId}/remove?role=platform-admin`;
    const last = await h.submit(ada, self, { confirm: OPERATORS.ada });
    t.is(last.status, 409);
    t.regex(last.text, /is the last platform administrator: add another one/);
    t.is((await h.page('/console/operators', ada)).status, 200, 'Ada is still a platform administrator');
  },
);

test.serial('a sign-in older than five minutes is asked for again before an operator is added', async (t) => {
  const ada = await h.signIn(OPERATORS.ada);
  await h.ageSignIn(OPERATORS.ada);
  const stale = await h.submit(ada, '/console/operators/new', { email: 'gus@example.com', role: 'auditor' });
  t.is(stale.status, 403);
  t.regex(stale.text, /\/console\/sign-in\?fresh=1/);
  t.is(await userId('gus@example.com'), undefined);
});

test.serial('two platform administrators removing each other at once: one platform administrator stays', async (t) => {
  const ada = await h.signIn(OPERATORS.ada);
  const fay = 'fay@example.com';
  t.is((await h.submit(ada, '/console/operators/new', { email: fay, role: 'platform-admin' })).status, 303);
  const fayJar = await h.signIn(fay);
  const [adaId, fayId] = [(await userId(OPERATORS.ada))!, (await userId(fay))!];
  const answers = await Promise.all([
    h.submit(ada, `/console/operators/${fayId}/remove?role=platform-admin`, { confirm: fay }),
    h.submit(fayJar, `/console/operators/${adaId}/remove?role=platform-admin`, { confirm: OPERATORS.ada }),
  ]);
  // One wins; the other is refused by the service (409) or, when the winner committed before it
  // was read, is no operator any more (403). Never both removed.
  const [first, second] = answers.map((a) => a.status).sort();
  t.true((first === 303 && second === 403) || (first === 303 && second === 409), `${first} ${second}`);
  const left = await h.ds.query<{ n: number }[]>(
    `SELECT COUNT(*) AS n FROM role_assignments ra JOIN roles r ON r.id = ra.role_id AND r.tenant_id = ra.tenant_id
      WHERE ra.tenant_id = ? AND r.name = 'platform-admin'`,
    [h.platform],
  );
  t.is(Number(left[0].n), 1);
});
