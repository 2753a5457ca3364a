/**
 * /api/admin/tenants/{tenantId}/mail-templates (docs/email.md, "Templates"): a tenant's
 * overrides through the admin API, with one daemon for the file: create and replace, list with
 * the kinds' variables, preview, the refusal of an unknown variable, another tenant's 404, the
 * audit of each change, delete.
 */
import test from 'ava';
import type { Database } from '../../shared/db/index.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let ds: Database;
let admin: string;
let otherTenantId: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const services = await openServices(db.url, db.dir);
  ds = services.ds;
  otherTenantId = (await activeTenant(services.provisioning, { name: 'Other' }, { type: 'system', id: 'test' })).id;
  d = await startDaemon(db.url, db.dir);
  admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await ds?.destroy();
  await db?.drop();
});

const base = (tenantId: string) => `/api/admin/tenants/${tenantId}/mail-templates`;
async function call(method: string, path: string, token?: string, body?: unknown) {
  const r = await fetch(`${d.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}

test('a tenant admin overrides, lists, previews and deletes a mail template; each change audited', async (t) => {
  const one = `${base(s.tenantId)}/sign_in_code/de`;
  t.is((await call('GET', one)).status, 401);
  t.is((await call('GET', one, admin)).status, 404, 'no override yet');

  const created = await call('PUT', one, admin, { subject: '{{tenant_name}}: Code {{code}}' });
  t.is(created.status, 201);
  t.like(created.body, { kind: 'sign_in_code', locale: 'de', subject: '{{tenant_name}}: Code {{code}}', text: null });
  const replaced = await call('PUT', one, admin, { subject: 'Code {{code}}', html: '<p>{{code}}</p>' });
  t.is(replaced.status, 200);
  t.like(replaced.body, { subject: 'Code {{code}}', html: '<p>{{code}}</p>', last_error: null });

  const list = await call('GET', base(s.tenantId), admin);
  t.is(list.status, 200);
  t.deepEqual(
    list.body!.items.map((i: { kind: string; locale: string }) => `${i.kind}/${i.locale}`),
    ['sign_in_code/de'],
  );
  const kind = list.body!.kinds.find((k: { kind: string }) => k.kind === 'sign_in_code');
  t.true(kind.variables.includes('code') && kind.variables.includes('tenant_name'));

  const preview = await call('GET', `${one}/preview`, admin);
  t.is(preview.status, 200);
  t.like(preview.body, { source: 'override', subject: 'Code 123456', locale: 'de' });
  t.regex(preview.body!.text, /Ihr Anmeldecode/);
  t.regex(preview.body!.html, /<p>123456<\/p>/);

  // An unknown variable: 400 naming it; nothing stored.
  const bad = await call('PUT', `${base(s.tenantId)}/sign_in_code/fr`, admin, { text: 'Code: {{otp}}' });
  t.is(bad.status, 400);
  t.like(bad.body, { error: 'invalid_template', field: 'text', variable: 'otp' });
  t.regex(bad.body!.message, /unknown variable \{\{otp\}\}/);
  t.is((await call('PUT', `${base(s.tenantId)}/no_such_kind/de`, admin, { text: 'x' })).status, 400);
  t.is((await call('PUT', `${base(s.tenantId)}/sign_in_code/ja`, admin, { text: 'x' })).status, 400);
  t.is((await call('PUT', one, admin, {})).status, 400, 'at least one part');
  // Another tenant, existing or not: the tenant routes' 403 tenant_forbidden (as email-settings),
  // the same answer either way, so the token learns nothing of the other tenant.
  for (const id of [otherTenantId, 'ten_doesnotexist']) {
    const r = await call('PUT', `${base(id)}/sign_in_code/de`, admin, { text: '{{code}}' });
    t.like(r, { status: 403, body: { error: 'tenant_forbidden' } });
  }
  t.is((await call('GET', base(otherTenantId), admin)).status, 403);
  t.deepEqual(await ds.query('SELECT kind FROM mail_templates WHERE tenant_id = ?', [otherTenantId]), []);

  t.is((await call('DELETE', one, admin)).status, 204);
  t.is((await call('DELETE', one, admin)).status, 404);
  t.like((await call('GET', `${one}/preview`, admin)).body, { source: 'default', subject: 'Ihr Anmeldecode: 123456' });

  const events = await ds.query<{ action: string; actor_id: string; target_id: string }[]>(
    "SELECT action, actor_id, target_id FROM audit_events WHERE action LIKE 'tenant.mail_template.%' " +
      'ORDER BY created_at, action DESC',
  );
  t.deepEqual(
    events.map((e) => [e.action, e.actor_id, e.target_id]),
    [
      ['tenant.mail_template.update', s.tenantAdmin.clientId, 'sign_in_code/de'],
      ['tenant.mail_template.update', s.tenantAdmin.clientId, 'sign_in_code/de'],
      ['tenant.mail_template.delete', s.tenantAdmin.clientId, 'sign_in_code/de'],
    ],
  );
});
