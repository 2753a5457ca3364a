/**
 * The login benches' targets and load loop, asserted on what they do, never on how fast: one
 * whole login through node-oidc-provider's interaction flow (bench/login-peer.ts) and one
 * through ours with real SMTP delivery (bench/lib/our-login.ts), and the shared loop
 * (bench/lib/login-driver.ts) counting logins and failures per target.
 */
import test from 'ava';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { alternate, measureLogins, type LoginTarget } from '../../bench/lib/login-driver.js';
import { OUR_STEPS, prepareOurLogin } from '../../bench/lib/our-login.js';
import { PEER_RS } from '../../bench/lib/peer.js';
import { PEER_STEPS, startPeerLogin } from '../../bench/login-peer.js';

test('the peer signs in through its login and consent forms, and introspects its tokens', async (t) => {
  const peer = await startPeerLogin(2);
  t.teardown(() => peer.stop());
  const marks = await peer.login(1);
  t.is(marks.length, PEER_STEPS.length + 1);
  t.true(marks.every((m, i) => i === 0 || m >= marks[i - 1]));
  // The account lookup is real: an account the peer does not have is refused at the login form.
  await t.throwsAsync(() => peer.login(2), { message: 'login 400' });
  // Each login starts a fresh browser session, so the next one is a full sign-in again.
  t.is((await peer.login(0)).length, PEER_STEPS.length + 1);
  // The same peer serves the introspection bench: client_credentials, then introspection.
  const basic = 'Basic ' + Buffer.from(`${PEER_RS.id}:${PEER_RS.secret}`).toString('base64');
  const form = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic };
  const tok = await fetch(`${peer.url}/token`, {
    method: 'POST',
    headers: form,
    body: 'grant_type=client_credentials&scope=api',
  });
  t.is(tok.status, 200);
  const { access_token } = (await tok.json()) as { access_token: string };
  const intro = await fetch(`${peer.url}/token/introspection`, {
    method: 'POST',
    headers: form,
    body: new URLSearchParams({ token: access_token }).toString(),
  });
  t.is(intro.status, 200);
  t.like(await intro.json(), { active: true, client_id: PEER_RS.id });
});

test('our flow signs in with the code delivered over SMTP and gets tokens', async (t) => {
  const setup = await prepareOurLogin({ concurrency: 1 });
  const ours = await setup.start();
  t.teardown(async () => {
    await ours.stop();
    await setup.close();
  });
  const marks = await ours.login(0);
  t.is(marks.length, OUR_STEPS.length + 1);
  t.is(setup.mailsReceived(), 1);
});

// Serial: the other tests' start-up work on this event loop must not fill the measured window.
test.serial('the load loop counts each target’s logins and failures apart', async (t) => {
  let calls = 0;
  const fake = (name: string, fail: boolean): LoginTarget => ({
    name,
    pid: process.pid,
    workers: 1,
    steps: ['a', 'b'],
    requestsPerLogin: 2,
    async login() {
      calls++;
      const t0 = performance.now();
      await nextTurn();
      const t1 = performance.now();
      await nextTurn();
      if (fail) throw new Error('step b 500');
      return [t0, t1, performance.now()];
    },
  });
  const opts = { concurrency: 3, warmupSeconds: 0, durationSeconds: 0.5 };
  const good = await measureLogins(fake('good', false), opts);
  t.true(good.logins > 0);
  t.is(good.failed, 0);
  t.deepEqual(Object.keys(good.stepsMs), ['a', 'b']);
  t.is(good.fullFlowMs.count, good.logins);
  const rounds = await alternate(fake('good', false), fake('bad', true), 2, opts);
  t.is(rounds.length, 2);
  t.true(rounds.every((r) => r.a.name === 'good' && r.b.name === 'bad' && r.b.logins === 0 && r.b.failed > 0));
  t.deepEqual(Object.keys(rounds[0].b.failures), ['step b 500']);
  t.true(calls > 0);
});
