/**
 * Mail templates (docs/email.md, "Templates"): the defaults in each locale, a tenant's override,
 * escaping in the HTML part, validation on save, and a stored override that no longer checks
 * falling back to the default at send time without stopping a sign-in.
 */
import test from 'ava';
import { ApiError } from '../../shared/errors.js';
import { EmailCodeService } from '../../shared/services/auth/codes.js';
import { Throttle } from '../../shared/services/auth/throttle.js';
import { MailTemplateService } from '../../shared/services/mail-templates.js';
import { renderMail } from '../../shared/services/mail/templates.js';
import { Outbox } from '../../shared/services/outbox.js';
import { TenantScope } from '../../shared/repositories/index.js';
import { TEST_SECRET_KEY, testDatabase } from '../helpers/db.js';
import { memoryLogger } from '../helpers/jobs.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };
const branding = {
  displayName: 'Acme & Co',
  logoUrl: 'https://cdn.example.com/acme.png',
  primaryColor: '#ff6600',
  supportUrl: 'https://help.example.com/',
};
const vars = { code: '424242', expires_minutes: 10, tenant_name: 'Acme & Co', issuer_host: 'id.example.com' };

test('the sign-in code mail by default in en, de and fr, in the tenant’s branded frame', (t) => {
  const en = renderMail('sign_in_code', 'en', vars, branding);
  t.is(en.subject, 'Your sign-in code: 424242');
  t.regex(en.text, /^Your sign-in code for id\.example\.com is 424242\.\n\nIt expires in 10 minutes\./);
  const de = renderMail('sign_in_code', 'de', vars, branding);
  t.is(de.subject, 'Ihr Anmeldecode: 424242');
  t.regex(de.text, /lautet 424242\..*10 Minuten gültig/s);
  const fr = renderMail('sign_in_code', 'fr', vars, branding);
  t.is(fr.subject, 'Votre code de connexion : 424242');
  t.regex(fr.text, /est 424242\..*expire dans 10 minutes/s);
  // The frame: logo, escaped name, the primary colour, the localised support line and link.
  t.regex(de.html, /^<!doctype html><html lang="de">/);
  t.true(de.html.includes('<img src="https://cdn.example.com/acme.png" alt="Acme &amp; Co"'));
  t.true(de.html.includes('border-bottom:3px solid #ff6600'));
  t.true(de.html.includes('Brauchen Sie Hilfe?'));
  t.true(de.html.includes('<a href="https://help.example.com/"'));
  t.true(de.html.includes('<strong>424242</strong>'));
});

test('the HTML part escapes every value; a hostile logo URL or colour is left out', (t) => {
  const hostile = { displayName: '<b>x</b>', logoUrl: 'javascript:alert(1)', primaryColor: 'red;background:url(x)' };
  const m = renderMail(
    'email_changed',
    'en',
    { old_email: '"><script>alert(1)</script>', new_email: 'n@example.com', tenant_name: '<b>x</b>' },
    hostile,
    { html: '<p>{{old_email}} at {{tenant_name}}</p>' },
  );
  t.false(m.html.includes('<script>'));
  t.true(m.html.includes('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt; at &lt;b&gt;x&lt;/b&gt;'));
  t.false(m.html.includes('javascript:'));
  t.false(m.html.includes('red;background'));
  // The text part is plain text: as given.
  t.true(m.text.includes('"><script>alert(1)</script>'));
  // A subject is one header line, whatever a value holds.
  t.is(renderMail('email_changed', 'en', {}, hostile, { subject: 'to {{new_email}}' }).subject, 'to');
  t.is(
    renderMail('email_changed', 'en', { new_email: 'a\r\nBcc: eve@example.com' }, hostile, {
      subject: 'to {{new_email}}',
    }).subject,
    'to a Bcc: eve@example.com',
  );
});

test('overrides: checked on save, used for their kind and locale only, and a broken one never stops a sign-in', async (t) => {
  const db = await testDatabase(t);
  const { ds, config, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const tenant = await activeTenant(provisioning, { name: 'Acme' }, actor);
  const { logger, lines } = memoryLogger();
  const templates = new MailTemplateService(ds, { issuerHost: 'id.example.com', logger });

  // Refused on save, naming the variable (or the brace) and the part.
  const unknown = await t.throwsAsync(
    templates.put(tenant.id, 'sign_in_code', 'de', { subject: 'Code {{pin}}' }, actor),
    { instanceOf: ApiError },
  );
  t.like(unknown, { status: 400, error: 'invalid_template', extra: { field: 'subject', variable: 'pin' } });
  t.regex(unknown.message, /unknown variable \{\{pin\}\}/);
  await t.throwsAsync(templates.put(tenant.id, 'sign_in_code', 'de', { text: '{{#if code}}x{{/if}}' }, actor), {
    message: /text: "\{\{#if code\}\}" is not a \{\{name\}\} tag/,
  });
  await t.throwsAsync(templates.put(tenant.id, 'sign_in_code', 'de', { html: '{{{code}}}' }, actor), {
    message: /html: "\{\{\{" is not supported/,
  });
  // The code is not a variable of a mail that carries none.
  await t.throwsAsync(templates.put(tenant.id, 'email_in_use', 'en', { text: '{{code}}' }, actor), {
    message: /unknown variable \{\{code\}\}/,
  });

  const { created } = await templates.put(
    tenant.id,
    'sign_in_code',
    'de',
    { subject: '{{tenant_name}}: {{code}}' },
    actor,
  );
  t.true(created);
  const de = await templates.compose({
    tenantId: tenant.id,
    kind: 'sign_in_code',
    locale: 'de',
    vars: { code: '111111' },
  });
  t.is(de.subject, 'Acme: 111111');
  t.regex(de.text, /Ihr Anmeldecode/, 'the parts not overridden are the default');
  const en = await templates.compose({
    tenantId: tenant.id,
    kind: 'sign_in_code',
    locale: 'en',
    vars: { code: '111111' },
  });
  t.is(en.subject, 'Your sign-in code: 111111');
  // An unsupported or absent locale is English.
  t.is(
    (await templates.compose({ tenantId: tenant.id, kind: 'sign_in_code', locale: 'ja', vars: { code: '1' } })).subject,
    'Your sign-in code: 1',
  );

  // A stored override that no longer checks (as after an upgrade that dropped a variable).
  await new TenantScope(ds, tenant.id).mailTemplates.update({
    kind: 'sign_in_code',
    locale: 'de',
    subject: 'Code {{pin_code}}',
    textBody: null,
    htmlBody: null,
    now: Date.now(),
  });
  const outbox = new Outbox(ds, config.secretKey);
  const codes = new EmailCodeService(
    ds,
    TEST_SECRET_KEY,
    outbox,
    'id.example.com',
    new Throttle(ds, config.throttle, 0),
    templates,
  );
  const user = await directory.createUser(tenant.id, { email: 'ann@example.com', name: 'Ann' }, actor);
  const login = {
    tenantId: tenant.id,
    clientId: 'cli_test',
    email: user.email,
    binding: 'ar:test',
    allowSignup: false,
    meta: { ip: '192.0.2.1', userAgent: 'test' },
    locale: 'de',
  };
  await codes.sendCode(login);
  const rows = await ds.query('SELECT id, tenant_id, payload_sealed FROM outbox WHERE tenant_id = ?', [tenant.id]);
  const sent = outbox.openEmail(String(rows[0].id), tenant.id, String(rows[0].payload_sealed));
  const code = /: (\d{6})$/.exec(sent.subject)?.[1];
  t.is(sent.subject, `Ihr Anmeldecode: ${code}`, 'the default German subject');
  t.regex(sent.text, new RegExp(`lautet ${code}\\.`));
  // The sign-in goes on with that code.
  const proof = await codes.prove({ ...login, code: code!, allowSignup: false });
  t.is(proof.provider, 'email_code');
  // Logged by kind and locale, never with the code; recorded for operators.
  const warned = lines.find((l) => l.msg === 'mail template override unusable; the default was sent');
  t.like(warned, { tenantId: tenant.id, kind: 'sign_in_code', locale: 'de' });
  t.regex(String(warned?.error), /unknown variable \{\{pin_code\}\}/);
  t.false(JSON.stringify(lines).includes(code!));
  const stored = await templates.get(tenant.id, 'sign_in_code', 'de');
  t.regex(stored.last_error ?? '', /unknown variable \{\{pin_code\}\}/);
  t.is(typeof stored.last_error_at, 'number');
  const states = () =>
    ds.query<{ condition_code: string; subject_id: string; state: string }[]>(
      'SELECT condition_code, subject_id, state FROM operational_notification_states WHERE tenant_id = ?',
      [tenant.id],
    );
  t.like(await states(), [{ condition_code: 'mail_template_invalid', subject_id: 'sign_in_code/de', state: 'open' }]);
  t.like(await templates.preview(tenant.id, 'sign_in_code', 'de'), {
    source: 'default',
    subject: 'Ihr Anmeldecode: 123456',
  });
  // A new PUT replaces it and clears the error; DELETE brings the default back.
  const fixed = await templates.put(tenant.id, 'sign_in_code', 'de', { subject: 'Neu: {{code}}' }, actor);
  t.like(fixed, { created: false, template: { subject: 'Neu: {{code}}', last_error: null } });
  t.like(await states(), [{ state: 'resolved' }], 'the PUT clears the notification state');
  t.like(await templates.preview(tenant.id, 'sign_in_code', 'de'), { source: 'override', subject: 'Neu: 123456' });
  await templates.delete(tenant.id, 'sign_in_code', 'de', actor);
  t.deepEqual((await templates.list(tenant.id)).items, []);
  await t.throwsAsync(templates.delete(tenant.id, 'sign_in_code', 'de', actor), { message: /was not found/ });
});
