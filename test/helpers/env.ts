/**
 * A running daemon with a seeded tenant (seedApp), a resource-server client that may
 * introspect, and the SMTP sink that login mail goes to: the setup the user-facing endpoint
 * tests share.
 */
import { createTestDatabase, type TestDb } from './db.js';
import { startDaemon, type Daemon } from './daemon.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';
import { credentialsClient, introspectAs as introspectAsClient, openServices, TEST_API } from './seed.js';
import type { ClientCreds } from './login.js';
import { seedApp, type App } from './oauth.js';

export interface LoginEnv {
  db: TestDb;
  d: Daemon;
  app: App;
  sink: SmtpSink;
  api: ClientCreds;
}

/** `env`: more of the daemon's environment (e.g. outbound HTTPS to a loopback test server). */
export async function startLoginEnv(env: Record<string, string> = {}): Promise<LoginEnv> {
  const db = await createTestDatabase();
  const app = await seedApp(db.url, db.dir);
  const { ds, directory } = await openServices(db.url, db.dir);
  const api = await credentialsClient(directory, app.tenantId, TEST_API);
  await ds.destroy();
  const sink = await startSmtpSink();
  const d = await startDaemon(db.url, db.dir, {
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
    ...env,
  });
  return { db, d, app, sink, api };
}

export async function stopLoginEnv(e: Partial<LoginEnv>): Promise<void> {
  await e.d?.stop();
  await e.sink?.close();
  await e.db?.drop();
}

let seq = 0;

/** A fresh user in the seeded tenant, so parallel tests never share codes or sessions. */
export async function createUserIn(e: LoginEnv, prefix: string): Promise<{ id: string; email: string }> {
  const n = ++seq;
  const email = `${prefix}${n}-${Date.now()}@example.com`;
  const { ds, directory } = await openServices(e.db.url, e.db.dir);
  const user = await directory.createUser(
    e.app.tenantId,
    { email, name: `${prefix} ${n}` },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  return { id: user.id, email };
}

/** POST /introspect as the environment's resource server. */
export async function introspectAs(e: LoginEnv, token: string): Promise<Record<string, unknown>> {
  return (await introspectAsClient(e.d.url, e.api, token)).body;
}
