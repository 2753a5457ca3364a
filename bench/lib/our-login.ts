/**
 * Our login flow as a bench target (bench/lib/login-driver.ts): the spec's five requests per
 * login (authorize page, send code, verify code, authorize again with the session, token),
 * with every sign-in code delivered by the smtp provider to a local SMTP server
 * (smtp-server) and read from there. `prepareOurLogin` seeds a database and starts the SMTP
 * sink once; `start` runs a daemon over them, and more than one may run side by side (the
 * workers bench alternates IAM_WORKERS=1 and 2 over one database).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startDaemon } from '../../test/helpers/daemon.js';
import { createTestDatabase } from '../../test/helpers/db.js';
import { activeTenant, openServices } from '../../test/helpers/seed.js';
import { DpopService } from '../../shared/services/dpop/index.js';
import { createApiClients, type ApiClients } from './api-clients.js';
import { BenchHttpClient, redeemCode } from './http-client.js';
import type { LoginTarget } from './login-driver.js';
import {
  clientAssertion,
  dpopKey,
  dpopProof,
  push,
  redeemCodeWithDpop,
  type DpopKey,
  type FapiClientKey,
} from './fapi-client.js';

export const REDIRECT = 'https://rp.bench.test/callback';
export const OUR_STEPS = ['authorize', 'send', 'mail', 'verify', 'continue', 'token'] as const;
/** The FAPI flow's steps: the push first, and the token request with private_key_jwt and DPoP. */
export const OUR_FAPI_STEPS = ['par', ...OUR_STEPS] as const;

export interface OurLoginOptions {
  concurrency: number;
  /** mysql://… for MariaDB; the default is a fresh SQLite database. */
  databaseUrl?: string;
  /**
   * Also a resource server (`Bench API`, may introspect) and a machine client (`Bench app`,
   * client_credentials for it), as bench/introspect.ts seeds them, for benches that mix
   * introspection and token issuance with logins.
   */
  apiClients?: boolean;
  /**
   * The FAPI 2.0 flow's work instead (bench/login-fapi.ts): the client is a private_key_jwt
   * client with this key, required to push (`require_pushed_authorization_requests`), in a
   * tenant whose DPoP policy requires a proof at every token request (`requireDpop`); each login
   * pushes, opens `/authorize` with the `request_uri`, and redeems its code with a client
   * assertion and a DPoP proof.
   */
  fapi?: FapiClientKey;
}

export type { ApiClients } from './api-clients.js';

export interface OurDaemonOptions {
  name?: string;
  workers?: number;
  /** IAM_SQLITE_SYNCHRONOUS: FULL (the default, durable) or NORMAL. */
  synchronous?: string;
  /** Node options for the daemon, e.g. ['--cpu-prof', '--cpu-prof-dir=…']. */
  nodeArgs?: string[];
  env?: Record<string, string>;
}

export type OurLogin = LoginTarget & { url: string; stop(): Promise<void> };

export async function prepareOurLogin(opts: OurLoginOptions) {
  // ---- a minimal SMTP sink: resolve the waiting login when its code arrives ----
  const waiting = new Map<string, (code: string) => void>();
  let mailsReceived = 0;
  const smtp = new SMTPServer({
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    logger: false,
    size: 1024 * 1024,
    disableReverseLookup: true,
    onData(stream, session, cb) {
      let data = '';
      stream.on('data', (c: Buffer) => {
        data += c.toString('utf8');
      });
      stream.on('end', () => {
        mailsReceived++;
        const m = /sign-in code: (\d{6})/.exec(data);
        for (const r of session.envelope.rcptTo) {
          const resolve = waiting.get(r.address.toLowerCase());
          if (resolve && m) {
            waiting.delete(r.address.toLowerCase());
            resolve(m[1]);
          }
        }
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  // ---- database, seeded like an operator would ----
  if (opts.databaseUrl) process.env.IAM_TEST_DATABASE_URL = opts.databaseUrl;
  const db = await createTestDatabase();
  const kind: 'sqlite' | 'mariadb' = db.url.startsWith('mysql') ? 'mariadb' : 'sqlite';
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'bench' };
  const tenant = await activeTenant(provisioning, { name: 'Bench' }, actor);
  const { client, client_secret } = await directory.createClient(
    tenant.id,
    opts.fapi
      ? {
          name: 'Bench FAPI',
          redirect_uris: [REDIRECT],
          first_party: true,
          jwks: { keys: [opts.fapi.publicJwk] },
          require_pushed_authorization_requests: true,
        }
      : { name: 'Bench web', redirect_uris: [REDIRECT], first_party: true },
    actor,
  );
  if (opts.fapi) {
    if (client.token_endpoint_auth_method !== 'private_key_jwt') throw new Error('FAPI client not private_key_jwt');
    // The secret key and issuer are not used by a policy update.
    await new DpopService(ds, '', '').update(tenant.id, { requireDpop: true }, actor);
  }
  const users: string[] = [];
  for (let i = 0; i < opts.concurrency; i++)
    users.push(
      (await directory.createUser(tenant.id, { email: `bench${i}@bench.test`, name: `Bench ${i}` }, actor)).email,
    );
  let api: ApiClients | undefined;
  if (opts.apiClients) {
    api = await createApiClients(directory, tenant.id, actor);
  }
  await ds.destroy();
  const clientId = client.client_id;
  const basic = 'Basic ' + Buffer.from(`${clientId}:${client_secret ?? ''}`).toString('base64');

  const codeFor = (email: string) =>
    new Promise<string>((resolve, reject) => {
      waiting.set(email, resolve);
      setTimeout(() => {
        if (waiting.get(email) === resolve) {
          waiting.delete(email);
          reject(new Error('mail timeout'));
        }
      }, 30_000).unref();
    });

  async function start(o: OurDaemonOptions = {}): Promise<OurLogin> {
    const workers = o.workers ?? 1;
    const daemon = await startDaemon(
      db.url,
      db.dir,
      {
        IAM_SMTP_URL: `smtp://127.0.0.1:${smtpPort}?maxConnections=32`,
        IAM_EMAIL_CODE_RESEND_SECONDS: '0',
        IAM_LOG_LEVEL: 'warn',
        IAM_WORKERS: String(workers),
        IAM_SQLITE_SYNCHRONOUS: o.synchronous ?? 'FULL',
        // Every virtual user signs in from this one host, again and again: budgets wide enough
        // never to refuse, so each login still pays for every throttling check (docs/security.md).
        IAM_THROTTLE_IP_SENDS: '10000000',
        IAM_THROTTLE_IP_VERIFIES: '10000000',
        IAM_THROTTLE_IP_FORM_POSTS: '10000000',
        IAM_THROTTLE_TENANT_SENDS_PER_MINUTE: '10000000',
        IAM_THROTTLE_TENANT_VERIFIES_PER_MINUTE: '10000000',
        IAM_THROTTLE_ADDRESS_MAIL_PER_HOUR: '10000000',
        ...o.env,
      },
      o.nodeArgs ?? [],
    );
    // Keep-alive connections through undici's Pool (bench/lib/http-client.ts): node:http's
    // request/Agent costs more CPU, and this process shares the machine with the daemon it
    // measures. Redirects are not followed and cookies are carried by hand.
    const http = new BenchHttpClient(daemon.url, { maxSockets: opts.concurrency * 2 });
    const fapi = opts.fapi;
    /** One DPoP key per virtual user, as one per client instance. */
    const dpopKeys: DpopKey[] = [];

    async function login(vu: number): Promise<number[]> {
      const email = users[vu % users.length];
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const t: number[] = [performance.now()];
      const mark = () => t.push(performance.now());
      const params = {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT,
        scope: 'openid email',
        state: 's',
        nonce: 'n',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      };
      let q = new URLSearchParams(params);
      if (fapi) {
        const requestUri = await push(http, '/par', await clientAssertion(fapi, clientId, daemon.url), params);
        q = new URLSearchParams({ client_id: clientId, request_uri: requestUri });
        mark();
      }
      const page = await http.request('GET', `/authorize?${q}`, {});
      if (page.status !== 200) throw new Error(`authorize ${page.status}`);
      const challengeId = /name="challenge" value="([^"]+)"/.exec(page.body)![1];
      mark();
      const codeArrives = codeFor(email);
      const send = await http.request(
        'POST',
        '/api/v1/auth/direct/email-code/send',
        { 'content-type': 'application/json' },
        JSON.stringify({ client_id: clientId, email, authorization_challenge_id: challengeId }),
      );
      if (send.status !== 200) throw new Error(`send ${send.status}`);
      mark();
      const code = await codeArrives;
      mark();
      const verify = await http.request(
        'POST',
        '/api/v1/auth/direct/email-code/verify',
        { 'content-type': 'application/json' },
        JSON.stringify({ client_id: clientId, email, code, authorization_challenge_id: challengeId }),
      );
      if (verify.status !== 200) throw new Error(`verify ${verify.status}`);
      const cookie = String(
        (verify.headers['set-cookie'] as string[]).find((c) => c.startsWith('service_session='))!.split(';')[0],
      );
      const redirectUrl = new URL((JSON.parse(verify.body) as { redirect_url: string }).redirect_url);
      mark();
      const cont = await http.request('GET', redirectUrl.pathname + redirectUrl.search, { cookie });
      if (cont.status !== 302) throw new Error(`continue ${cont.status}`);
      const authCode = new URL(String(cont.headers.location)).searchParams.get('code')!;
      mark();
      const form = { code: authCode, redirect_uri: REDIRECT, code_verifier: verifier };
      if (fapi) {
        const key = (dpopKeys[vu] ??= await dpopKey());
        await redeemCodeWithDpop(http, {
          path: '/token',
          assertion: await clientAssertion(fapi, clientId, daemon.url),
          proof: await dpopProof(key, 'POST', `${daemon.url}/token`),
          form,
        });
      } else await redeemCode(http, basic, form);
      mark();
      return t;
    }

    return {
      name: o.name ?? `iam (${kind}${workers > 1 ? `, ${workers} workers` : ''})`,
      pid: daemon.proc.pid!,
      workers,
      steps: fapi ? OUR_FAPI_STEPS : OUR_STEPS,
      requestsPerLogin: fapi ? 6 : 5,
      login,
      url: daemon.url,
      async stop() {
        await http.close();
        await daemon.stop();
      },
    };
  }

  return {
    db,
    kind,
    tenantId: tenant.id,
    clientId,
    api,
    start,
    mailsReceived: () => mailsReceived,
    async close() {
      smtp.close();
      await db.drop();
    },
  };
}
