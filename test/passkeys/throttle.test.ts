/**
 * The direct passkey endpoints spend the sign-in budgets (docs/security.md, docs/passkeys.md):
 * options the IP's form budget, verify the IP's check budget; a spent one is 429 slow_down
 * with Retry-After, before any challenge is stored or consumed.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { pkce, seedApp, type App } from '../helpers/oauth.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let app: App;

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  d = await startDaemon(db.url, db.dir, { IAM_THROTTLE_IP_FORM_POSTS: '3', IAM_THROTTLE_IP_VERIFIES: '2' });
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const post = (path: string, body: unknown) => api(d.url, 'POST', path, { body });

test('options and verify count against the IP budgets; a spent one is 429 with Retry-After', async (t) => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await post('/api/v1/auth/direct/passkey/options', { client_id: app.web.clientId });
    t.is(r.status, 200);
    ids.push(r.body.challenge_id as string);
  }
  const spent = await post('/api/v1/auth/direct/passkey/options', { client_id: app.web.clientId });
  t.is(spent.status, 429);
  t.is(spent.body.error, 'slow_down');
  t.regex(spent.headers.get('retry-after') ?? '', /^\d+$/);

  // Verify: the (well-formed, refused) assertions spend the check budget, right or wrong.
  const credential = {
    id: 'AAAAAAAAAAAAAAAAAAAAAA',
    rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
    type: 'public-key',
    response: {
      clientDataJSON: Buffer.from('{}').toString('base64url'),
      authenticatorData: 'A'.repeat(50),
      signature: 'AAAA',
    },
    clientExtensionResults: {},
  };
  const verify = (challengeId: string) =>
    post('/api/v1/auth/direct/passkey/verify', {
      client_id: app.web.clientId,
      challenge_id: challengeId,
      credential,
      code_challenge: pkce().challenge,
    });
  t.is((await verify(ids[0])).status, 400);
  t.is((await verify(ids[1])).status, 400);
  const limited = await verify(ids[2]);
  t.is(limited.status, 429);
  t.is(limited.body.error, 'slow_down');
  t.truthy(limited.headers.get('retry-after'));
});
