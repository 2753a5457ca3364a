/**
 * The sign-in pages in the user's language (docs/localisation.md) and in the tenant's branding
 * (docs/branding.md): ui_locales kept across the login steps, Accept-Language, discovery's
 * ui_locales_supported; the branding admin API's round trip, its refusals and the page it
 * makes (logo, name, colour, support link, the CSP's img-src); the CLI's show and set.
 */
import test from 'ava';
import { iam } from '../helpers/cli.js';
import { startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { authorizeUrl, challengeFrom, CookieJar, csrfFrom, pkce, REDIRECT, sql } from '../helpers/oauth.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { scopeDescriptions } from '../../shared/i18n/scopes.js';
import { MAX_CUSTOM_CSS } from '../../shared/schemas/branding.js';

let env: LoginEnv;
let admin: string;
let otherTenant: string;

test.before(async () => {
  env = await startLoginEnv();
  admin = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
  const { ds, provisioning } = await openServices(env.db.url, env.db.dir);
  try {
    otherTenant = (await activeTenant(provisioning, { name: 'Other' }, { type: 'system', id: 'test' })).id;
  } finally {
    await ds.destroy();
  }
});
test.after.always(() => stopLoginEnv(env));

const loginUrl = (extra: Record<string, string> = {}) =>
  authorizeUrl(env.d.url, {
    response_type: 'code',
    client_id: env.app.web.clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: 's',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

async function page(url: string, headers: Record<string, string> = {}, jar?: CookieJar) {
  const res = await fetch(url, { headers: { ...headers, ...(jar ? { cookie: jar.header() } : {}) } });
  jar?.take(res);
  return { res, html: await res.text() };
}

const branding = (tenantId: string, method = 'GET', body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${env.d.url}/api/admin/tenants/${tenantId}/branding`, {
    method,
    headers: {
      authorization: `Bearer ${admin}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

test('ui_locales=de: the login page is German, and the code step after it too (the request keeps it)', async (t) => {
  const jar = new CookieJar();
  // ui_locales wins over the browser's language (OIDC Core §3.1.2.1).
  const first = await page(loginUrl({ ui_locales: 'de-CH fr' }), { 'accept-language': 'fr' }, jar);
  t.is(first.res.status, 200);
  t.regex(first.html, /<html lang="de">/);
  t.regex(first.html, /Code per E-Mail senden/);
  t.regex(first.html, /<label for="email">E-Mail-Adresse<\/label>/);
  const form = new URLSearchParams({
    challenge: challengeFrom(first.html),
    csrf: csrfFrom(first.html),
    email: 'alice@example.com',
  });
  // The form post carries no ui_locales and an English browser: the saved request decides.
  const sent = await fetch(`${env.d.url}/login/email-code`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header(), 'accept-language': 'en' },
    body: form,
  });
  const html = await sent.text();
  t.is(sent.status, 200);
  t.regex(html, /<html lang="de">/);
  t.regex(html, /Sehen Sie in Ihr Postfach/);
  t.regex(html, /Code gesendet\./);
  t.regex(html, /Falls <strong>alice@example\.com<\/strong> zu einem Konto gehört/);
  // The code mail speaks the page's language too.
  const mail = await env.sink.waitFor((m) => m.to.includes('alice@example.com'), 15_000);
  t.regex(mail.subject, /^Ihr Anmeldecode: \d{6}$/);
});

test('Accept-Language fr: the login page is French; an unknown client’s error page too', async (t) => {
  const fr = await page(loginUrl(), { 'accept-language': 'ja, fr-CA;q=0.8, en;q=0.5' });
  t.regex(fr.html, /<html lang="fr">/);
  t.regex(fr.html, /Recevoir un code par e-mail/);
  t.regex(fr.html, /<title>Se connecter à Web<\/title>/);
  const unknown = await page(`${env.d.url}/authorize?client_id=nope`, { 'accept-language': 'fr' });
  t.is(unknown.res.status, 400);
  t.regex(unknown.html, /Application inconnue/);
  const en = await page(loginUrl(), { 'accept-language': 'ja' });
  t.regex(en.html, /<html lang="en">/);
  t.regex(en.html, /Email me a code/);
});

test('scope descriptions in the user’s language; a scope without one is shown as itself', (t) => {
  t.deepEqual(scopeDescriptions('fr', ['openid', 'email', 'reports.read']), [
    { scope: 'openid', description: 'Savoir qui vous êtes' },
    { scope: 'email', description: 'Voir votre adresse e-mail' },
    { scope: 'reports.read', description: 'reports.read' },
  ]);
  t.is(scopeDescriptions('de', ['offline_access'])[0].description, 'Angemeldet bleiben, auch wenn Sie nicht da sind');
});

test('RP-initiated logout speaks its own ui_locales (RP-Initiated Logout 1.0 §2)', async (t) => {
  const out = await page(`${env.d.url}/logout?ui_locales=de`, { 'accept-language': 'fr' });
  t.is(out.res.status, 200);
  t.regex(out.html, /<html lang="de">/);
  t.regex(out.html, /<h1>Sie sind abgemeldet<\/h1>/);
});

test('discovery lists the pages’ languages (OIDC Discovery §3 ui_locales_supported)', async (t) => {
  const d = (await (await fetch(`${env.d.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.deepEqual(d.ui_locales_supported, ['en', 'de', 'fr']);
});

test.serial('branding: PUT then GET round trip with ETag, If-Match, audit; the page shows it', async (t) => {
  const tid = env.app.tenantId;
  const before = await branding(tid);
  t.is(before.status, 200);
  const empty = (await before.json()) as { branding: object; effective: { displayName: string } };
  t.deepEqual(empty.branding, {});
  t.is(empty.effective.displayName, 'Login tenant', "the display name defaults to the tenant's name");
  const body = {
    displayName: 'Acme',
    logoUrl: 'https://cdn.acme.example/brand/logo.png',
    primaryColor: '#FFD500',
    supportUrl: 'mailto:help@acme.example',
    customCss: 'h1 { letter-spacing: .02em; }',
  };
  const put = await branding(tid, 'PUT', body, { 'if-match': before.headers.get('etag')! });
  t.is(put.status, 200);
  const view = (await put.json()) as { branding: typeof body; effective: Record<string, string> };
  t.is(view.branding.primaryColor, '#ffd500', 'stored lower-case');
  t.is(view.effective.primaryTextColor, '#000000', 'white on yellow fails WCAG AA, so the text is black');
  const etag = put.headers.get('etag')!;
  t.not(etag, before.headers.get('etag'));
  const got = await branding(tid);
  t.is(got.headers.get('etag'), etag);
  t.deepEqual(((await got.json()) as { branding: unknown }).branding, { ...body, primaryColor: '#ffd500' });
  // A stale If-Match changes nothing (RFC 9110 §13.1.1).
  const stale = await branding(tid, 'PUT', { displayName: 'Late' }, { 'if-match': before.headers.get('etag')! });
  t.is(stale.status, 412);
  t.is(((await stale.json()) as { error: string }).error, 'precondition_failed');
  const rows = (await sql(
    env.db.url,
    env.db.dir,
    "SELECT actor_type, actor_id FROM audit_events WHERE action = 'tenant.branding.update' AND tenant_id = ?",
    [tid],
  )) as { actor_type: string; actor_id: string }[];
  t.is(rows.length, 1);
  t.is(rows[0].actor_id, env.app.admin.clientId);

  const jar = new CookieJar();
  const { res, html } = await page(loginUrl(), {}, jar);
  const csp = res.headers.get('content-security-policy')!;
  t.regex(csp, /img-src 'self' data: https:\/\/cdn\.acme\.example;/, 'the logo’s origin, and only it, joins img-src');
  t.notRegex(csp, /brand\/logo/);
  t.regex(html, /<img src="https:\/\/cdn\.acme\.example\/brand\/logo\.png" alt="" height="40"><span>Acme<\/span>/);
  t.regex(html, /--brand: #ffd500; --brand-text: #000000;/);
  t.regex(html, /h1 \{ letter-spacing: \.02em; \}<\/style>/);
  t.regex(html, /<a href="mailto:help@acme\.example">Help and support<\/a>/);
  // The code step after the form post is branded too (its look comes from the client lookup).
  const codeStep = await fetch(`${env.d.url}/login/email-code`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({ challenge: challengeFrom(html), csrf: csrfFrom(html), email: 'nobody@example.com' }),
  });
  const codeHtml = await codeStep.text();
  t.is(codeStep.status, 200);
  t.regex(codeHtml, /--brand: #ffd500; --brand-text: #000000;/);
  t.regex(codeHtml, /<span>Acme<\/span>/);

  // The same branding reaches the tenant's mails (the mail composer reads the branding service).
  const mail = (await (
    await fetch(`${env.d.url}/api/admin/tenants/${tid}/mail-templates/sign_in_code/de/preview`, {
      headers: { authorization: `Bearer ${admin}` },
    })
  ).json()) as { html: string };
  t.regex(mail.html, /https:\/\/cdn\.acme\.example\/brand\/logo\.png/);
  t.regex(mail.html, /#ffd500/);
  t.regex(mail.html, /Acme/);

  // A same-origin logo adds no origin to img-src; clearing the branding clears the page.
  await branding(tid, 'PUT', { logoUrl: '/assets/acme.png' });
  const plain = await page(loginUrl());
  t.regex(plain.res.headers.get('content-security-policy')!, /img-src 'self' data:;/);
  t.notRegex(plain.html, /--brand:/);
  t.is((await branding(tid, 'PUT', {})).status, 200);
});

test('branding refusals: bad colour, http logo, oversized or escaping CSS, bad support link → 400; another tenant → 403', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ primaryColor: 'red' }, /^body\.primaryColor: must be a colour written #rrggbb/],
    [{ primaryColor: '#12345' }, /^body\.primaryColor: /],
    [{ logoUrl: 'http://cdn.acme.example/logo.png' }, /^body\.logoUrl: must be an https URL/],
    [{ logoUrl: '//evil.example/logo.png' }, /^body\.logoUrl: /],
    [{ logoUrl: 'https://user:pw@cdn.acme.example/l.png' }, /^body\.logoUrl: /],
    [{ customCss: 'a{}'.repeat(MAX_CUSTOM_CSS) }, /^body\.customCss: must be at most 8192 characters/],
    [{ customCss: 'a{}</STYLE><script>alert(1)</script>' }, /^body\.customCss: must not contain <\/style/],
    [{ supportUrl: 'javascript:alert(1)' }, /^body\.supportUrl: must be an https URL or a mailto: address/],
    [{ colour: '#ffffff' }, /^body: /],
  ];
  for (const [body, why] of cases) {
    const r = await branding(env.app.tenantId, 'PUT', body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    const e = (await r.json()) as { error: string; error_description: string; message: string };
    t.is(e.error, 'invalid_request');
    t.regex(e.error_description, why);
    t.is(e.message, e.error_description);
  }
  // Another tenant's path is refused as on every tenant route (docs/errors.md, tenant_forbidden).
  for (const r of [await branding(otherTenant), await branding(otherTenant, 'PUT', { displayName: 'x' })]) {
    t.is(r.status, 403);
    t.is(((await r.json()) as { error: string }).error, 'tenant_forbidden');
  }
});

test.serial('iam tenants branding set and show; a bad colour is refused naming the flag', async (t) => {
  const db = env.db;
  const tid = env.app.tenantId;
  const set = await iam(db, ['tenants', 'branding', 'set', '--tenant', tid, '--primary-color', '#0b5fff', '--json']);
  t.is(set.code, 0, set.stderr);
  t.like(JSON.parse(set.stdout), { branding: { primaryColor: '#0b5fff' }, effective: { primaryTextColor: '#ffffff' } });
  const show = await iam(db, ['tenants', 'branding', 'show', '--tenant', tid]);
  t.is(show.code, 0, show.stderr);
  t.regex(show.stdout, /primary colour: +#0b5fff \(text on it: #ffffff\)/);
  const bad = await iam(db, ['tenants', 'branding', 'set', '--tenant', tid, '--primary-color', 'blue']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /invalid --primary-color "blue": must be a colour written #rrggbb/);
  await branding(tid, 'PUT', {});
});
