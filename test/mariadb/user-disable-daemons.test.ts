/**
 * A user disabled on one daemon is refused on every daemon of the database the moment the call
 * returns (docs/directory.md, "Users: disable, sign out everywhere, delete (erasure)"): two
 * daemons of one service on one MariaDB database; daemon B has the user's access token in its
 * introspection cache (an active answer), daemon A disables the user; B at once answers
 * `active: false` for the token, refuses the refresh (invalid_grant) and the sign-in (403
 * user_disabled). Introspection's cache holds verifications, never the revocation check,
 * which runs against the database on every request (shared/services/introspection.ts).
 */
import test from 'ava';
import { api } from '../helpers/api.js';
import { startDaemon } from '../helpers/daemon.js';
import { testDatabase, usingMysql } from '../helpers/db.js';
import { loginKit } from '../helpers/login.js';
import { seedApp } from '../helpers/oauth.js';
import { clientCredentialsToken, credentialsClient, introspectAs, openServices, TEST_API } from '../helpers/seed.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';

test('a user disabled on daemon A is refused on daemon B at once, cached introspection included', async (t) => {
  // This file is in the MariaDB lane's file list only; running it elsewhere is a mistake, not a skip.
  t.true(usingMysql(), 'IAM_TEST_DATABASE_URL must name a MariaDB/MySQL server (npm run test:mariadb)');
  const db = await testDatabase(t);
  const app = await seedApp(db.url, db.dir);
  const { ds, directory } = await openServices(db.url, db.dir);
  const rs = await credentialsClient(directory, app.tenantId, TEST_API);
  await ds.destroy();
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const env = { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0', IAM_WORKERS: '1' };
  const a = await startDaemon(db.url, db.dir, env);
  t.teardown(() => a.stop());
  // One service: B takes A's issuer, so a token of one is a token of the other.
  const b = await startDaemon(db.url, db.dir, { ...env, IAM_ISSUER: a.url });
  t.teardown(() => b.stop());

  const onA = loginKit(
    () => a.url,
    () => sink,
  );
  const onB = loginKit(
    () => b.url,
    () => sink,
  );
  const tokens = await onA.tokensFor(app.web, app.user.email);
  // B's cache now holds the token as active.
  t.true((await introspectAs(b.url, rs, tokens.access_token)).body.active);
  t.true((await introspectAs(b.url, rs, tokens.access_token)).body.active);
  const code = await onA.sendAndReadCode(app.web.clientId, app.user.email);

  const admin = await clientCredentialsToken(a.url, app.admin.clientId, app.admin.secret);
  const disabled = await api(a.url, 'POST', `/api/admin/tenants/${app.tenantId}/users/${app.user.id}/disable`, {
    token: admin,
  });
  t.is(disabled.status, 200);
  t.like(disabled.body, { status: 'disabled', changed: true });

  t.deepEqual((await introspectAs(b.url, rs, tokens.access_token)).body, { active: false });
  const refreshed = await onB.refresh(tokens.refresh_token, app.web);
  t.is(refreshed.status, 400);
  t.is(refreshed.body.error, 'invalid_grant');
  const verify = await api(b.url, 'POST', '/api/v1/auth/direct/email-code/verify', {
    body: { client_id: app.web.clientId, email: app.user.email, code },
  });
  t.is(verify.status, 403);
  t.is(verify.body.error, 'user_disabled');
});
