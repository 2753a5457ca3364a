/**
 * The console's settings sections of a tenant over HTTP against one daemon (docs/console.md,
 * "Pages"): identity providers, custom claims (with a rename's progress), plugins, token
 * exchange and email. Every page 200 for a platform administrator and 404 for a tenant
 * administrator on another tenant (and another tenant's sub-resource 404); an auditor reads them
 * and every post is 403; the plugin configuration and email routing edits need a fresh sign-in,
 * refuse bad input on the form (400) and are audited under the operator's user id; no page shows
 * a secret.
 */
import test from 'ava';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import { startConsole, type ConsoleHarness } from '../helpers/console.js';
import type { CookieJar } from '../helpers/oauth.js';
import { insertUpstreamIdp } from '../helpers/user-transfer.js';

let h: ConsoleHarness;
let acme = '';
let other = '';
let claimId = '';
const IDP = 'uip_console_test';
/** A second provider, the one the move test disables (the pages test reads the first as it is). */
const IDP_MOVED = 'uip_console_moved';
const SEALED = 'sealed-IDP-SECRET-never-shown';
const SECRET = 'whsec-console-test-SIGNING-KEY-9f3b';

const base = (tenant: string) => `/console/tenants/${tenant}`;
const page = (path: string, jar: CookieJar) => h.page(path, jar);

test.before(async () => {
  h = await startConsole();
  ({ acme, other } = h);
  const actor = { type: 'system' as const, id: 'test' };
  claimId = (
    await new CustomClaimsService(h.ds).createSchema(
      acme,
      { field_key: 'department', display_label: 'Department', field_type: 'string', cardinality: 'one' },
      actor,
    )
  ).id;
  for (const [id, slug] of [
    [IDP, 'corp'],
    [IDP_MOVED, 'partner'],
  ])
    await insertUpstreamIdp(h.ds, acme, {
      id,
      slug,
      displayName: `${slug} SSO`,
      issuer: `https://${slug}.example.test`,
      sealedSecret: SEALED,
    });
});

test.after.always(async () => {
  await h?.close();
});

/** Every GET page of the sections, for `tenant` (the sub-resources are acme's). */
const pages = (tenant: string) => [
  `${base(tenant)}/identity-providers`,
  `${base(tenant)}/identity-providers/${IDP}`,
  `${base(tenant)}/identity-providers/${IDP}/disable`,
  `${base(tenant)}/claims`,
  `${base(tenant)}/claims/${claimId}`,
  `${base(tenant)}/claims/${claimId}/rename`,
  `${base(tenant)}/plugins`,
  `${base(tenant)}/plugins/webhook-email`,
  `${base(tenant)}/plugins/webhook-email/configure`,
  `${base(tenant)}/plugins/webhook-email/enable`,
  `${base(tenant)}/token-exchange`,
  `${base(tenant)}/token-exchange/edit`,
  `${base(tenant)}/email`,
  `${base(tenant)}/email/edit`,
];

const adminId = async (email: string) =>
  (await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ?', [email]))[0].id;
const auditOf = (action: string) =>
  h.ds.query<{ actor_type: string; actor_id: string }[]>(
    'SELECT actor_type, actor_id FROM audit_events WHERE action = ? AND tenant_id = ?',
    [action, acme],
  );

test('every settings page: 200 for a platform administrator, 404 for a tenant administrator of another tenant', async (t) => {
  const ada = await h.signIn('ada@example.com');
  const bob = await h.signIn('bob@example.com');
  for (const path of pages(acme)) {
    const r = await page(path, ada);
    t.is(r.status, 200, path);
    t.regex(r.text, /<nav class="tabs"[^>]*>.*aria-current="page"/s, `${path}: the section tabs`);
    t.false(r.text.includes(SEALED), `${path}: no sealed secret`);
  }
  for (const path of pages(other)) t.is((await page(path, bob)).status, 404, path);
  // Another tenant's sub-resource, for someone who sees both tenants: 404 like an unknown one.
  for (const path of [`/identity-providers/${IDP}`, `/claims/${claimId}`, '/plugins/no-such-plugin'])
    t.is((await page(`${base(other)}${path}`, ada)).status, 404, path);

  const list = await page(`${base(acme)}/identity-providers`, ada);
  t.regex(list.text, /corp SSO<\/a>.*<td data-label="State">active<\/td>/s);
  const detail = await page(`${base(acme)}/identity-providers/${IDP}`, ada);
  t.regex(detail.text, /<dt>Client secret<\/dt><dd>set<\/dd>/);
  t.regex(detail.text, /Disable identity provider…/);
});

test('an auditor reads the settings pages and every settings post is 403', async (t) => {
  const carol = await h.signIn('carol@example.com');
  for (const path of pages(acme)) t.is((await page(path, carol)).status, 200, path);
  t.notRegex((await page(`${base(acme)}/plugins/webhook-email`, carol)).text, /Configure plugin…/);
  const posts = [
    `/identity-providers/${IDP}/disable`,
    `/identity-providers/${IDP}/enable`,
    `/claims/${claimId}/rename`,
    '/plugins/webhook-email/configure',
    '/plugins/webhook-email/enable',
    '/plugins/webhook-email/disable',
    '/token-exchange/edit',
    '/email/edit',
  ];
  for (const path of posts) {
    const r = await h.submit(carol, `${base(acme)}${path}`, { new_field_key: 'dept', signingSecret: SECRET });
    t.is(r.status, 403, path);
    t.regex(r.text, /changes nothing/, path);
  }
});

test('plugin configuration: step-up, inline refusal, secrets never shown, audited as the operator', async (t) => {
  const form = `${base(acme)}/plugins/webhook-email/configure`;
  const change = { url: 'https://hooks.example.com/mail', signingSecret: SECRET };
  // Bob's sign-in is six minutes old: asked for a fresh one, nothing stored.
  const bob = await h.signIn('bob@example.com');
  await h.ageSignIn('bob@example.com');
  const stale = await h.submit(bob, form, change);
  t.is(stale.status, 403);
  t.regex(stale.text, /\/console\/sign-in\?fresh=1/);
  t.deepEqual(await auditOf('plugin.configure'), []);

  const ada = await h.signIn('ada@example.com');
  const bad = await h.submit(ada, form, { ...change, url: 'http://hooks.example.com/mail' });
  t.is(bad.status, 400);
  t.regex(bad.text, /<p class="error" role="alert" id="form-error">config\.url: /);
  t.false(bad.text.includes(SECRET), 'the refused form does not echo the secret');
  t.regex(bad.text, /value="http:\/\/hooks\.example\.com\/mail"/, 'what was typed is kept');

  const ok = await h.submit(ada, form, change);
  t.is(ok.status, 303, ok.text);
  t.is(ok.location, `${base(acme)}/plugins/webhook-email`);
  const [event] = await auditOf('plugin.configure');
  t.deepEqual(event, { actor_type: 'user', actor_id: await adminId('ada@example.com') });

  t.is((await h.submit(ada, `${base(acme)}/plugins/webhook-email/enable`)).status, 303);
  const detail = await page(`${base(acme)}/plugins/webhook-email`, ada);
  t.regex(detail.text, /<dt>Enabled<\/dt><dd>yes<\/dd>/);
  t.regex(detail.text, /<code>signingSecret<\/code> \(secret\)<\/td><td>set<\/td>/);
  t.regex(detail.text, /<code>bearerToken<\/code> \(secret\)<\/td><td>not set<\/td>/);
  for (const path of [detail, await page(form, ada), await page(`${base(acme)}/plugins`, ada)])
    t.false(path.text.includes(SECRET.slice(-4)), 'not even the last four characters');
});

test('email routing: inline refusal, then a change audited as the operator', async (t) => {
  const ada = await h.signIn('ada@example.com');
  const form = `${base(acme)}/email/edit`;
  const bad = await h.submit(ada, form, { strategy: 'priority_failover', providerOrder: 'carrier-pigeon' });
  t.is(bad.status, 400);
  t.regex(bad.text, /role="alert" id="form-error">[^<]*unknown provider/);
  t.regex(bad.text, />carrier-pigeon<\/textarea>/, 'what was typed is kept');

  const ok = await h.submit(ada, form, { strategy: 'priority_failover', providerOrder: 'log\nsmtp' });
  t.is(ok.status, 303, ok.text);
  t.is(ok.location, `${base(acme)}/email`);
  t.regex((await page(`${base(acme)}/email`, ada)).text, /<ol><li><code>log<\/code><\/li><li><code>smtp<\/code>/);
  const [event] = await auditOf('tenant.email_settings.update');
  t.deepEqual(event, { actor_type: 'user', actor_id: await adminId('ada@example.com') });
});

test('identity provider disable, claim rename with its progress, token exchange edit', async (t) => {
  const ada = await h.signIn('ada@example.com');
  const idp = `${base(acme)}/identity-providers/${IDP_MOVED}`;
  t.is((await h.submit(ada, `${idp}/disable`)).status, 303);
  t.regex((await page(idp, ada)).text, /<dt>State<\/dt><dd>disabled<\/dd>/);
  t.is((await h.submit(ada, `${idp}/enable`)).status, 303);
  t.is((await auditOf('upstream_idp.disable'))[0]?.actor_id, await adminId('ada@example.com'));

  const claim = `${base(acme)}/claims/${claimId}`;
  t.regex((await page(claim, ada)).text, /Never renamed/);
  const reserved = await h.submit(ada, `${claim}/rename`, { new_field_key: 'email' });
  t.is(reserved.status, 400);
  t.regex(reserved.text, /id="form-error">[^<]*reserved claim name/);
  const renamed = await h.submit(ada, `${claim}/rename`, { new_field_key: 'dept' });
  t.is(renamed.status, 303, renamed.text);
  const progress = (await page(claim, ada)).text;
  t.regex(progress, /<dt>To<\/dt><dd><code>dept<\/code><\/dd><dt>Phase<\/dt><dd>completed<\/dd>/);
  t.regex(progress, /<dt>Values copied<\/dt><dd>0 of 0<\/dd>/);

  const tx = `${base(acme)}/token-exchange/edit`;
  const badIssuer = await h.submit(ada, tx, { idJagEnabled: '1', allowedIssuers: 'http://jag.example.com' });
  t.is(badIssuer.status, 400);
  t.regex(badIssuer.text, /id="form-error">[^<]*must be an https URL/);
  // The fields as a browser posts them (checkboxes left unticked are absent).
  const on = await h.submit(ada, tx, {
    enabled: '1',
    allowedSubjectTokenTypes: 'access_token',
    maxResourceParams: '5',
    maxAudienceParams: '10',
    allowedIssuers: '',
    maxTokenLifetime: '300',
    requireConfidentialClient: '1',
  });
  t.is(on.status, 303, on.text);
  const shown = (await page(`${base(acme)}/token-exchange`, ada)).text;
  t.regex(shown, /<dt>Token exchange<\/dt><dd>enabled<\/dd>/);
  t.regex(shown, /<dt>Most resource parameters<\/dt><dd>5<\/dd>/);
});
