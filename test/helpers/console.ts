/**
 * The operator console over HTTP (docs/console.md): one daemon on a loopback issuer with a mail
 * sink, the tenants `acme` and `other`, and four people of the platform tenant: Ada
 * (platform-admin), Bob (tenant-admin of acme), Carol (auditor) and Dave (no operator role).
 * `signIn` leaves the session the login page would (an email-code sign-in with the console's
 * client); `submit` reads a form page and posts its hidden fields back, as a browser would.
 */
import { buildServices, type Services } from '../../shared/container.js';
import type { Database } from '../../shared/db/index.js';
import { NotificationStates } from '../../shared/services/notification-states.js';
import { createTestDatabase, type TestDb } from './db.js';
import { startLocalhostDaemon, type Daemon } from './daemon.js';
import { codeFrom, CookieJar, get, postJson } from './oauth.js';
import { activeTenant, openServices } from './seed.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';

export const OPERATORS = {
  ada: 'ada@example.com',
  bob: 'bob@example.com',
  carol: 'carol@example.com',
  dave: 'dave@example.com',
} as const;

export interface ConsoleHarness {
  db: TestDb;
  d: Daemon;
  sink: SmtpSink;
  ds: Database;
  services: Awaited<ReturnType<typeof openServices>>;
  acme: string;
  other: string;
  platform: string;
  consoleClient: string;
  signIn(email: string): Promise<CookieJar>;
  page(path: string, jar?: CookieJar): Promise<{ status: number; text: string; headers: Headers }>;
  /**
   * GET `formPath`, then POST its hidden fields (plus `change`, which wins) to `postPath`
   * (default the form's own `action`, else `formPath`). A form page that is not 200 is returned.
   */
  submit(
    jar: CookieJar,
    formPath: string,
    change?: Record<string, string>,
    postPath?: string,
  ): Promise<{ status: number; text: string; location: string | null }>;
  /** The CSRF token of `jar`'s session, read from the form page `formPath`. */
  csrf(jar: CookieJar, formPath: string): Promise<string>;
  /** POST `fields` to `path` as a form, as they are (add `csrf` yourself). */
  post(
    jar: CookieJar,
    path: string,
    fields: Record<string, string>,
  ): Promise<{ status: number; text: string; location: string | null }>;
  /** Every session of `email` signed in six minutes ago: a dangerous move asks for a fresh sign-in. */
  ageSignIn(email: string): Promise<void>;
  close(): Promise<void>;
}

const actor = { type: 'system' as const, id: 'test' };

export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleHarness> {
  const db = await createTestDatabase();
  const sink = await startSmtpSink();
  const services = await openServices(db.url, db.dir);
  const ds = services.ds;
  const acme = (await activeTenant(services.provisioning, { name: 'Acme' }, actor)).id;
  const other = (await activeTenant(services.provisioning, { name: 'Other' }, actor)).id;
  // The operators service the `iam operators add` command calls (test/cli/operators.test.ts runs
  // the command itself): three CLI processes per file cost seconds of CI for nothing more.
  const operators = buildServices(ds, services.config, undefined, { role: 'cli' }).operators;
  await operators.add({ email: OPERATORS.ada, role: 'platform-admin' }, actor);
  await operators.add({ email: OPERATORS.bob, role: 'tenant-admin', tenantId: acme }, actor);
  await operators.add({ email: OPERATORS.carol, role: 'auditor' }, actor);
  const [meta] = await ds.query<{ value: string }[]>(
    "SELECT value FROM service_meta WHERE name = 'platform_tenant_id'",
  );
  const platform = meta.value;
  await services.directory.createUser(platform, { email: OPERATORS.dave, name: 'Dave' }, actor);
  const { d } = await startLocalhostDaemon(db.url, db.dir, {
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
    ...env,
  });
  const start = await get(`${d.url}/console/sign-in`);
  if (!start.headers.get('location')) throw new Error(`console sign-in: ${start.status} ${await start.text()}`);
  const consoleClient = new URL(start.headers.get('location') ?? '').searchParams.get('client_id') ?? '';
  if (consoleClient !== `console.${platform}`) throw new Error(`console client ${consoleClient}`);

  // One sign-in at a time: tests of a file run at once, and two codes for one address would cross.
  let queue: Promise<unknown> = Promise.resolve();
  const signInNow = async (email: string) => {
    const jar = new CookieJar();
    const earlier = new Set(sink.messages);
    const sent = await postJson(`${d.url}/api/v1/auth/direct/email-code/send`, { client_id: consoleClient, email });
    if (sent.status !== 200) throw new Error(`send ${sent.status} ${await sent.text()}`);
    const code = codeFrom((await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000)).text);
    const r = await postJson(
      `${d.url}/api/v1/auth/direct/email-code/verify`,
      { client_id: consoleClient, email, code },
      jar,
    );
    if (r.status !== 200) throw new Error(`verify ${r.status} ${await r.text()}`);
    return jar;
  };
  const page: ConsoleHarness['page'] = async (path, jar) => {
    const r = await get(`${d.url}${path}`, jar);
    return { status: r.status, text: await r.text(), headers: r.headers };
  };
  const postForm = async (jar: CookieJar, path: string, fields: Record<string, string>) => {
    const r = await fetch(`${d.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams(fields).toString(),
    });
    return { status: r.status, text: await r.text(), location: r.headers.get('location') };
  };
  const hidden = (html: string) => {
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      fields[m[1]] = m[2]
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&');
    return fields;
  };
  return {
    db,
    d,
    sink,
    ds,
    services,
    acme,
    other,
    platform,
    consoleClient,
    signIn(email) {
      const next = queue.then(() => signInNow(email));
      queue = next.catch(() => undefined);
      return next;
    },
    page,
    async submit(jar, formPath, change = {}, postPath) {
      const form = await page(formPath, jar);
      if (form.status !== 200) return { status: form.status, text: form.text, location: null };
      const action = /<form method="post" action="([^"]+)"/.exec(form.text)?.[1]?.replace(/&amp;/g, '&');
      return postForm(jar, postPath ?? action ?? formPath, { ...hidden(form.text), ...change });
    },
    async csrf(jar, formPath) {
      const token = hidden((await page(formPath, jar)).text).csrf;
      if (!token) throw new Error(`no csrf field on ${formPath}`);
      return token;
    },
    post: postForm,
    async ageSignIn(email) {
      const [u] = await ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ?', [email]);
      await ds.query('UPDATE sessions SET auth_time = ? WHERE user_id = ?', [Date.now() - 6 * 60_000, u.id]);
    },
    async close() {
      await d.stop();
      await sink.close();
      await ds.destroy();
      await db.drop();
    },
  };
}

/** The system actor of seeded rows. */
const SYSTEM = { type: 'system' as const, id: 'test' };

/** A pending approval of one step (`manager`), its requester, target and approver made in `domain`. */
export async function seedApproval(svc: Services<undefined>, tenantId: string, domain: string) {
  const [req, tgt, apv] = await Promise.all(
    ['req', 'tgt', 'apv'].map((n) => svc.directory.createUser(tenantId, { email: `${n}@${domain}`, name: n }, SYSTEM)),
  );
  return svc.approvals.create(
    tenantId,
    {
      requester_subject_id: req.id,
      target_subject_id: tgt.id,
      requested_action: 'read_mailbox',
      resource_class: 'mailbox',
      audience: 'https://mail.example.test',
      steps: [{ step_key: 'manager', subject_id: apv.id }],
    },
    SYSTEM,
    'cli',
  );
}

/** A SAML aggregate trust source polled by hand (so never polled yet). */
export function seedTrustSource(svc: Services<undefined>, tenantId: string, sourceKey: string, displayName: string) {
  return svc.fieldMapping.trustSources.create(
    tenantId,
    {
      sourceType: 'saml_aggregate',
      sourceKey,
      displayName,
      protocolPayload: {
        metadataUrl: 'https://mds.example.invalid/metadata.xml',
        polling: { mode: 'manual', intervalSeconds: 3600 },
      },
    },
    SYSTEM,
  );
}

/** An active agent grant (`docs`: read, write) of a new agent client, its grantor made in `domain`. */
export async function seedAgentGrant(svc: Services<undefined>, tenantId: string, domain: string) {
  const d = svc.directory;
  const client = async (name: string) =>
    (await d.createClient(tenantId, { name, grant_types: ['client_credentials'], scopes: ['tools'] }, SYSTEM)).client
      .client_id;
  const [agent, machine] = [await client('agent'), await client('machine')];
  const grantor = await d.createUser(tenantId, { email: `grantor@${domain}`, name: 'G' }, SYSTEM);
  return svc.agentGrants.create(
    tenantId,
    {
      client_id: agent,
      grantor_user_id: grantor.id,
      machine_principal_id: machine,
      authorization_details: [{ type: 'docs', actions: ['read', 'write'] }],
      purpose: 'summarise documents',
      expires_at: Date.now() + 86_400_000,
      scopes: ['tools'],
      ceilings: {
        updater: { docs: ['*'] },
        grantor: { docs: ['read', 'write'] },
        machine_principal: { docs: ['read', 'write'] },
      },
    },
    SYSTEM,
  );
}

/**
 * One of everything the operations pages list, in `tenantId`: an open notification state, a
 * pending approval, a federation trust source, an agent grant (so a walk over the console's
 * links reaches their detail and form pages too).
 */
export async function seedOperations(h: ConsoleHarness, tenantId: string): Promise<void> {
  const svc = buildServices(h.ds, h.services.config, undefined, { role: 'cli' });
  await new NotificationStates(h.ds).raise(tenantId, 'metadata_expiring', {
    type: 'federation_trust_source',
    id: 'fts_seeded',
  });
  await seedApproval(svc, tenantId, 'seed.test');
  await seedTrustSource(svc, tenantId, 'seeded-fed', 'Seeded Federation');
  await seedAgentGrant(svc, tenantId, 'seed.test');
}
