/**
 * The console's Applications section over HTTP against one daemon (docs/console.md,
 * "Applications"): the empty list, registration with the service's refusal beside its field
 * (400) and the secret shown once, which then works at /token; rotation (the old secret refused
 * at once, the new one accepted), disable and enable; the edit form under the ETag it was drawn
 * from; another tenant's application 404 for a tenant administrator, an auditor's post 403, the
 * platform scope refused to a tenant administrator, delete only with the client_id typed; every
 * move audited under the operator's user id.
 */
import test from 'ava';
import { OPERATORS, startConsole, type ConsoleHarness } from '../helpers/console.js';
import type { CookieJar } from '../helpers/oauth.js';

let h: ConsoleHarness;
let acme = '';
let other = '';
let ada: CookieJar;
let bob: CookieJar;
let carol: CookieJar;
const system = { type: 'system' as const, id: 'test' };
const apps = (tenant: string) => `/console/tenants/${tenant}/applications`;

test.before(async () => {
  h = await startConsole();
  ({ acme, other } = h);
  ada = await h.signIn(OPERATORS.ada);
  bob = await h.signIn(OPERATORS.bob);
  carol = await h.signIn(OPERATORS.carol);
});

test.after.always(async () => {
  await h?.close();
});

/** POST /token client_credentials with HTTP Basic (RFC 6749 §2.3.1, §4.4): the status. */
async function tokenStatus(clientId: string, secret: string): Promise<number> {
  const res = await fetch(`${h.d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  await res.arrayBuffer();
  return res.status;
}

const secretIn = (html: string) => /<code id="secret">([^<]+)<\/code>/.exec(html)?.[1] ?? '';

/** The actors of `action` on the client `clientId`, as `type:id`. */
async function actors(action: string, clientId: string): Promise<string[]> {
  const rows = await h.ds.query<{ actor_type: string; actor_id: string }[]>(
    'SELECT actor_type, actor_id FROM audit_events WHERE action = ? AND target_id = ?',
    [action, clientId],
  );
  return rows.map((r) => `${r.actor_type}:${r.actor_id}`);
}

async function userId(email: string): Promise<string> {
  const [u] = await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ?', [email]);
  return u.id;
}

const serviceApp = async (tenant: string, name: string) => {
  const r = await h.services.directory.createClient(tenant, { name, grant_types: ['client_credentials'] }, system);
  return { clientId: r.client.client_id, secret: r.client_secret! };
};

// Serial, so it runs first: the empty state is seen before any other test registers one.
test.serial('create: a refused redirect URI beside its field (400), then the secret once, which works', async (t) => {
  const empty = await h.page(apps(acme), ada);
  t.is(empty.status, 200, empty.text);
  t.regex(empty.text, /<p class="empty">No applications yet/);
  t.regex(empty.text, new RegExp(`href="${apps(acme)}/new">Create application</a>`));

  const refused = await h.submit(ada, `${apps(acme)}/new`, {
    client_name: 'Web',
    type: 'confidential',
    redirect_uris: 'https://ok.example/cb\nhttp://evil.example/cb',
  });
  t.is(refused.status, 400, refused.text);
  t.regex(refused.text, /<textarea id="redirect_uris" aria-invalid="true"/);
  t.regex(refused.text, /<p class="error" id="redirect_uris-error">[^<]*evil\.example/);
  t.regex(refused.text, /value="Web"/, 'what was typed is kept');
  t.is((await h.ds.query('SELECT id FROM clients WHERE tenant_id = ?', [acme])).length, 0);

  const made = await h.submit(ada, `${apps(acme)}/new`, {
    client_name: 'Worker',
    type: 'confidential',
    redirect_uris: '',
    grant_types: 'client_credentials',
  });
  t.is(made.status, 200, made.text);
  const secret = secretIn(made.text);
  const clientId = /applications\/([^"]+)">Open the application</.exec(made.text)?.[1] ?? '';
  t.truthy(secret);
  t.is(await tokenStatus(clientId, secret), 200);
  t.deepEqual(await actors('client.create', clientId), [`user:${await userId(OPERATORS.ada)}`]);

  const list = await h.page(apps(acme), ada);
  t.regex(list.text, /<td data-label="Type">confidential<\/td><td data-label="State">active<\/td>/);
  const detail = await h.page(`${apps(acme)}/${clientId}`, ada);
  t.is(detail.status, 200);
  t.regex(detail.text, /<dt>Grant types<\/dt><dd><code>client_credentials<\/code><\/dd>/);
  t.notRegex(detail.text, new RegExp(secret), 'the secret is never shown again');
  t.regex(detail.text, /rotate-secret">Rotate secret…<\/a>/);
});

test('rotate: the old secret refused at once, the new one accepted; disable and enable', async (t) => {
  const app = await serviceApp(acme, 'Rotating');
  const base = `${apps(acme)}/${app.clientId}`;
  const r = await h.submit(ada, `${base}/rotate-secret`, { old_secret_expires_in: '0' });
  t.is(r.status, 200, r.text);
  t.regex(r.text, /select it and copy it/i);
  const fresh = secretIn(r.text);
  t.not(fresh, app.secret);
  t.is(await tokenStatus(app.clientId, app.secret), 401);
  t.is(await tokenStatus(app.clientId, fresh), 200);
  t.deepEqual(await actors('client.secret.add', app.clientId), [`user:${await userId(OPERATORS.ada)}`]);

  const off = await h.submit(ada, `${base}/disable`);
  t.is(off.status, 303);
  t.is(off.location, base);
  t.is(await tokenStatus(app.clientId, fresh), 401);
  t.is((await h.submit(ada, `${base}/enable`)).status, 303);
  t.is(await tokenStatus(app.clientId, fresh), 200);
});

test("edit: a public application's allowed origins, under the form's ETag; refusals beside the field", async (t) => {
  const made = await h.services.directory.createClient(
    acme,
    { name: 'SPA', public: true, redirect_uris: ['https://spa.example/cb'] },
    system,
  );
  const base = `${apps(acme)}/${made.client.client_id}`;
  const fields = {
    client_name: 'SPA two',
    redirect_uris: 'https://spa.example/cb',
    allowed_origins: 'https://spa.example',
    grant_types: 'authorization_code',
    scopes: 'openid profile',
  };
  const bad = await h.submit(bob, `${base}/edit`, { ...fields, allowed_origins: 'ftp://spa.example' });
  t.is(bad.status, 400, bad.text);
  t.regex(bad.text, /<p class="error" id="allowed_origins-error">/);

  const stale = await h.submit(bob, `${base}/edit`, { ...fields, etag: '"stale"' });
  t.is(stale.status, 412, stale.text);

  const ok = await h.submit(bob, `${base}/edit`, fields);
  t.is(ok.status, 303, ok.text);
  t.is(ok.location, base);
  const detail = await h.page(base, bob);
  t.regex(detail.text, /<h1>SPA two<\/h1>/);
  t.regex(detail.text, /<dt>Allowed origins \(CORS\)<\/dt><dd><ul><li><code>https:\/\/spa\.example<\/code>/);
  t.notRegex(detail.text, /Rotate secret/, 'a public application has no secret');
  t.deepEqual(await actors('client.update', made.client.client_id), [`user:${await userId(OPERATORS.bob)}`]);
});

test("roles: another tenant's application 404, an auditor's post 403, no platform scope for a tenant administrator, delete typed", async (t) => {
  const theirs = await serviceApp(other, 'Theirs');
  t.is((await h.page(apps(other), bob)).status, 404);
  t.is((await h.page(`${apps(acme)}/${theirs.clientId}`, bob)).status, 404);
  const csrf = await h.csrf(bob, `${apps(acme)}/new`);
  const cross = await h.post(bob, `${apps(acme)}/${theirs.clientId}/delete`, { csrf, confirm: theirs.clientId });
  t.is(cross.status, 404, 'named under their own tenant, still not found');
  t.is((await h.post(bob, `${apps(other)}/${theirs.clientId}/delete`, { csrf, confirm: theirs.clientId })).status, 404);

  const platform = await h.submit(bob, `${apps(acme)}/new`, {
    client_name: 'Escalate',
    type: 'confidential',
    grant_types: 'client_credentials',
    scopes: 'iam.platform',
  });
  t.is(platform.status, 403);
  t.regex(platform.text, /id="scopes-error">Only a platform administrator/);

  const mine = await serviceApp(acme, 'Doomed');
  const base = `${apps(acme)}/${mine.clientId}`;
  const ro = await h.submit(carol, `${base}/delete`, { confirm: mine.clientId });
  t.is(ro.status, 403);
  t.is((await h.submit(carol, `${apps(acme)}/new`, { client_name: 'X', type: 'public' })).status, 403);

  const wrong = await h.submit(bob, `${base}/delete`, { confirm: 'not-it' });
  t.is(wrong.status, 400);
  t.is((await h.page(base, bob)).status, 200, 'nothing was deleted');
  const done = await h.submit(bob, `${base}/delete`, { confirm: mine.clientId });
  t.is(done.status, 303);
  t.is(done.location, apps(acme));
  t.is((await h.page(base, bob)).status, 404);
  t.deepEqual(await actors('client.delete', mine.clientId), [`user:${await userId(OPERATORS.bob)}`]);
});
