/**
 * Tokens and userinfo across a rename's key switch: a user signed in before the rename keeps
 * refreshing while 10,000 users' values are copied, the key switches and the old values are
 * deleted. Every access token (a refresh issues no ID token) and userinfo answer carries the
 * user's value under exactly one of the two keys, never both, never none: the old key before
 * the switch, the new key after it.
 */
import test from 'ava';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import { startDaemon } from '../helpers/daemon.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { loginKit } from '../helpers/login.js';
import { clientCredentialsToken, openServices } from '../helpers/seed.js';
import { actor, insertSchema, renameCall, seedValues } from '../helpers/claim-rename.js';

let e: LoginEnv;
const kit = loginKit(
  () => e.d.url,
  () => e.sink,
);

test.before(async () => {
  e = await startLoginEnv();
  // The same daemon, with small, paced batches so the rename takes a few seconds.
  await e.d.stop();
  e.d = await startDaemon(e.db.url, e.db.dir, {
    IAM_SMTP_URL: e.sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
    IAM_CLAIM_RENAME_BATCH_SIZE: '250',
    IAM_CLAIM_RENAME_BATCH_PAUSE_MS: '100',
  });
});
test.after.always(async () => {
  await stopLoginEnv(e);
});

const payload = (jwt: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as Record<string, unknown>;

test('a token or userinfo obtained during the rename carries the claim under exactly one key', async (t) => {
  const { ds } = await openServices(e.db.url, e.db.dir);
  t.teardown(() => ds.destroy());
  await insertSchema(ds, e.app.tenantId, 'ccs_cc', 'cost_centre', {
    bindings: [{ token_type: 'id_token' }, { token_type: 'access_token' }, { token_type: 'userinfo' }],
  });
  await seedValues(ds, e.app.tenantId, 'cost_centre', 10_000);
  const u = await createUserIn(e, 'rename');
  await new CustomClaimsService(ds).setUserClaims(e.app.tenantId, u.id, { claims: { cost_centre: 'CC-7' } }, actor);
  let tokens = await kit.tokensFor(e.app.web, u.email);
  t.is(payload(tokens.access_token).cost_centre, 'CC-7');

  const admin = await clientCredentialsToken(e.d.url, e.app.admin.clientId, e.app.admin.secret);
  const accepted = await renameCall(e.d.url, 'PATCH', admin, 'ccs_cc', { new_field_key: 'cost_center' });
  t.is(accepted.status, 202, JSON.stringify(accepted.body));

  // Each sample is bracketed by the operation's state read before and after it: a sample
  // followed by `copying` was taken before the switch, one preceded by `cleanup` or
  // `completed` after it; around the switch itself only "exactly one key" is asserted.
  type Sample = { before: string; after: string; where: string; keys: string[]; value: unknown };
  const samples: Sample[] = [];
  const keysOf = (o: Record<string, unknown>) => ['cost_centre', 'cost_center'].filter((k) => k in o);
  let before = 'copying';
  let completedRounds = 0;
  while (completedRounds < 3) {
    const next = await kit.refresh(tokens.refresh_token, e.app.web);
    t.is(next.status, 200, JSON.stringify(next.body));
    tokens = { ...tokens, ...next.body };
    const ui = (await (await kit.userinfo(next.body.access_token)).json()) as Record<string, unknown>;
    const after = (await renameCall(e.d.url, 'GET', admin, 'ccs_cc')).body.operation.state as string;
    const seen: [string, Record<string, unknown>][] = [
      ['access_token', payload(next.body.access_token)],
      ['userinfo', ui],
    ];
    if (next.body.id_token) seen.push(['id_token', payload(next.body.id_token)]);
    for (const [where, o] of seen) {
      const keys = keysOf(o);
      samples.push({ before, after, where, keys, value: keys.length === 1 ? o[keys[0]] : undefined });
    }
    before = after;
    if (after === 'completed') completedRounds++;
  }

  // Never both keys, never none, always the user's value.
  const bad = samples.filter((x) => x.keys.length !== 1 || x.value !== 'CC-7');
  t.deepEqual(bad, []);
  const preSwitch = samples.filter((x) => x.after === 'copying');
  t.true(preSwitch.length > 0, 'sampled while the values were being copied');
  t.true(preSwitch.every((x) => x.keys[0] === 'cost_centre'));
  const postSwitch = samples.filter((x) => x.before === 'cleanup' || x.before === 'completed');
  t.true(postSwitch.length >= 6);
  t.true(postSwitch.every((x) => x.keys[0] === 'cost_center'));
  t.true(samples.some((x) => x.where === 'userinfo'));
});
