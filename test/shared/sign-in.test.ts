/**
 * The sign-in service's transaction (shared/services/auth/sign-in.ts): the spent proof, the
 * consumed authorization request and the session commit together or not at all, and an
 * authorization request completes one sign-in only.
 */
import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../../shared/db/index.js';
import { TenantScope } from '../../shared/repositories/index.js';
import { ArtifactService } from '../../shared/services/auth/artifacts.js';
import { ACR_EMAIL_CODE, AMR_EMAIL_CODE, EmailCodeService } from '../../shared/services/auth/codes.js';
import { OAuthService } from '../../shared/services/auth/oauth.js';
import { SessionService } from '../../shared/services/auth/sessions.js';
import { SignInService, type SignInMethods } from '../../shared/services/auth/sign-in.js';
import { Throttle } from '../../shared/services/auth/throttle.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { seedApp, type App } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';

let db: TestDb;
let app: App;
let ds: Database;
let codes: EmailCodeService;
let oauth: OAuthService;
const sessions = () => new SessionService(ds);
let mailed = '';
const meta = { ip: '192.0.2.7', userAgent: 'test' };

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  const opened = await openServices(db.url, db.dir);
  ds = opened.ds;
  const mail = {
    enqueueEmail: (_tx: unknown, msg: { subject: string }) => {
      mailed = /(\d{6})/.exec(msg.subject)![1];
      return Promise.resolve('mail');
    },
    kick: () => undefined,
  };
  codes = new EmailCodeService(
    ds,
    TEST_SECRET_KEY,
    mail,
    'iam.example.test',
    new Throttle(ds, opened.config.throttle, 0),
  );
  oauth = new OAuthService(ds);
});
test.after.always(async () => {
  await ds?.destroy();
  await db?.drop();
});

/** A sign-in service whose methods are the real ones, with `over` in place of some. */
function signInService(over: Partial<SignInMethods> = {}): SignInService {
  const unused = { prove: () => Promise.reject(new Error('not used by this test')) };
  return new SignInService(ds, {
    codes,
    sessions: sessions(),
    artifacts: new ArtifactService(ds),
    passkeys: unused,
    upstreamBroker: unused,
    ...over,
  });
}

/** A saved authorization request of the web client, and a code sent for it. */
async function requestAndCode(binding: string) {
  const verifier = randomBytes(32).toString('base64url');
  const requestId = await oauth.saveAuthRequest(app.tenantId, {
    client_id: app.web.clientId,
    redirect_uri: 'https://app.example/cb',
    response_type: 'code',
    scope: ['openid', 'email'],
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const login = {
    tenantId: app.tenantId,
    clientId: app.web.clientId,
    email: app.user.email,
    binding,
    allowSignup: false,
    meta,
  };
  await codes.sendCode(login);
  return { requestId, emailCode: { ...login, code: mailed } };
}

const target = (requestId: string) => ({
  clientId: app.web.clientId,
  meta,
  authRequest: { tenantId: app.tenantId, id: requestId, via: 'page' as const },
});

test.serial(
  'a failure after the request is consumed leaves the request and the code unspent and no session',
  async (t) => {
    const { requestId, emailCode } = await requestAndCode(`ar:tx-${Date.now()}`);
    const scope = new TenantScope(ds, app.tenantId);
    const before = await scope.sessions.liveIds(app.user.id, Date.now());
    // The session store fails after the code was consumed and the request consumed, in the same transaction.
    const failing = signInService({
      sessions: {
        createSession: () => Promise.reject(new Error('the session could not be written')),
        reauthenticate: () => Promise.resolve(false),
      },
    });
    await t.throwsAsync(failing.session({ emailCode }, target(requestId)), {
      message: 'the session could not be written',
    });
    t.false((await oauth.getAuthRequest(requestId))!.consumed);
    t.deepEqual(await scope.sessions.liveIds(app.user.id, Date.now()), before);

    // The same code still signs in: it was not spent; the request is consumed with that sign-in.
    const created = await signInService().session({ emailCode }, target(requestId));
    t.is(created.user.id, app.user.id);
    t.is(created.session.acr, ACR_EMAIL_CODE);
    t.deepEqual(created.session.amr, AMR_EMAIL_CODE);
    t.true((await oauth.getAuthRequest(requestId))!.consumed);
    t.deepEqual((await scope.sessions.liveIds(app.user.id, Date.now())).sort(), [...before, created.session.id].sort());
  },
);

test.serial(
  'a second sign-in for a completed request is refused whole: its code stays unspent, no session',
  async (t) => {
    const first = await requestAndCode(`ar:one-${Date.now()}`);
    await signInService().session({ emailCode: first.emailCode }, target(first.requestId));
    const scope = new TenantScope(ds, app.tenantId);
    const before = await scope.sessions.liveIds(app.user.id, Date.now());
    // Another code (another login transaction) presented for the same, now completed, request.
    const second = await requestAndCode(`ar:two-${Date.now()}`);
    const e = await t.throwsAsync(signInService().session({ emailCode: second.emailCode }, target(first.requestId)), {
      message: 'This sign-in request was already completed; start again.',
    });
    t.is((e as unknown as { status: number }).status, 400);
    t.deepEqual(await scope.sessions.liveIds(app.user.id, Date.now()), before);
    // Its code was not consumed: it still signs in where no request is continued.
    const created = await signInService().session(
      { emailCode: second.emailCode },
      { clientId: app.web.clientId, meta },
    );
    t.is(created.user.id, app.user.id);
  },
);
