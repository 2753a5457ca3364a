import type { ParameterizedContext } from 'koa';
import { translator } from '../../shared/i18n/index.js';
import { scopeDescriptions } from '../../shared/i18n/scopes.js';
import type { Client } from '../../shared/db/entities.js';
import { isAdminScope } from '../../shared/scopes.js';
import { PASSKEY_SCRIPTS } from './assets.js';
import { esc, renderPage, tHtml, type PageLook } from './html.js';

interface Common {
  challenge: string;
  csrf: string;
  clientName: string;
  /** The page's language and the tenant's branding (docs/localisation.md, docs/branding.md). */
  look: PageLook;
}

/** A tenant's upstream OpenID provider, as its login button names it. */
export interface ProviderButton {
  slug: string;
  name: string;
}

/**
 * One form per upstream provider: a POST (so that no link on another site can start a sign-in
 * in this browser), carrying the authorization request and its CSRF token.
 */
function providerButtons(p: Common & { providers?: ProviderButton[] }): string {
  if (!p.providers?.length) return '';
  const tr = translator(p.look.locale);
  const forms = p.providers
    .map(
      (b) => `<form method="post" action="/login/upstream/start">
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <input type="hidden" name="provider" value="${esc(b.slug)}">
  <button type="submit" class="secondary">${esc(tr('login.continueWith', { provider: b.name }))}</button>
</form>`,
    )
    .join('\n');
  return `\n<p class="hint">${esc(tr('login.or'))}</p>\n${forms}`;
}

const PASSKEY_MESSAGES = ['unavailable', 'signing', 'removed', 'refused', 'cancelled', 'failed'] as const;

/**
 * "Sign in with a passkey" (docs/passkeys.md, "Pages"): rendered hidden, shown by the page's
 * script when the browser can do WebAuthn, so without JavaScript the page is the email form
 * alone. The script posts the authorization request and its CSRF token, as the forms do.
 */
function passkeyButton(p: Common): string {
  const tr = translator(p.look.locale);
  // The script's messages in the page's language (daemon/views/passkeys-script.ts).
  const messages = PASSKEY_MESSAGES.map(
    (m) => ` data-msg-${m}="${esc(tr(`login.passkey${m[0].toUpperCase()}${m.slice(1)}`))}"`,
  );
  const data = `data-challenge="${esc(p.challenge)}" data-csrf="${esc(p.csrf)}"${messages.join('')}`;
  return `<div id="passkey-login" hidden ${data}>
  <p class="hint">${esc(tr('login.or'))}</p>
  <button type="button" id="passkey-button" class="secondary">${esc(tr('login.passkey'))}</button>
  <p id="passkey-message" role="alert" hidden></p>
</div>`;
}

/** Step 1: the email address. `type=email` lets browsers and password managers fill it, and
 * `autocomplete="username webauthn"` offers the user's passkeys in that autofill too (conditional
 * mediation); errors are tied to the field with aria-describedby and announced. Below it, the
 * passkey button and a "Continue with <name>" button per upstream provider of the tenant. */
export function emailStep(
  ctx: ParameterizedContext,
  p: Common & { email?: string; error?: string; status?: number; providers?: ProviderButton[] },
): void {
  const tr = translator(p.look.locale);
  const err = p.error ? `<p id="email-error" class="error" role="alert">${esc(p.error)}</p>` : '';
  renderPage(ctx, {
    title: tr('login.title', { client: p.clientName }),
    status: p.status,
    scripts: PASSKEY_SCRIPTS,
    locale: p.look.locale,
    branding: p.look.branding,
    body: `<h1>${esc(tr('login.title', { client: p.clientName }))}</h1>
<p class="hint" id="email-hint">${esc(tr('login.emailHint'))}</p>
<form method="post" action="/login/email-code" novalidate>
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <label for="email">${esc(tr('login.emailLabel'))}</label>
  <input id="email" name="email" type="email" autocomplete="username webauthn" inputmode="email" required autofocus
    value="${esc(p.email ?? '')}" aria-describedby="email-hint${p.error ? ' email-error' : ''}"${
      p.error ? ' aria-invalid="true"' : ''
    }>
  ${err}
  <button type="submit">${esc(tr('login.sendCode'))}</button>
</form>
${passkeyButton(p)}${providerButtons(p)}`,
  });
}

const strong = (v: string) => `<strong>${esc(v)}</strong>`;

/** Step 2: the code, one field with `autocomplete=one-time-code` (autofill from mail/SMS apps). */
export function codeStep(
  ctx: ParameterizedContext,
  p: Common & { email: string; error?: string; notice?: string; status?: number },
): void {
  const tr = translator(p.look.locale);
  const err = p.error ? `<p id="code-error" class="error" role="alert">${esc(p.error)}</p>` : '';
  const notice = p.notice ? `<p role="status">${esc(p.notice)}</p>` : '';
  // The authorization request, its CSRF token and the address, carried by each of the step's forms.
  const carried =
    `<input type="hidden" name="challenge" value="${esc(p.challenge)}">\n` +
    `  <input type="hidden" name="csrf" value="${esc(p.csrf)}">\n` +
    `  <input type="hidden" name="email" value="${esc(p.email)}">`;
  renderPage(ctx, {
    title: tr('login.codeTitle', { client: p.clientName }),
    status: p.status,
    locale: p.look.locale,
    branding: p.look.branding,
    body: `<h1>${esc(tr('login.codeHeading'))}</h1>
${notice}
<p class="hint" id="code-hint">${tHtml(p.look.locale, 'login.codeHint', { email: strong(p.email) })}</p>
<form method="post" action="/login/verify" novalidate>
  ${carried}
  <label for="code">${esc(tr('login.codeLabel'))}</label>
  <input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6}"
    maxlength="6" required autofocus
    aria-describedby="code-hint${p.error ? ' code-error' : ''}"${p.error ? ' aria-invalid="true"' : ''}>
  ${err}
  <button type="submit">${esc(tr('login.signIn'))}</button>
</form>
<form method="post" action="/login/email-code">
  ${carried}
  <button type="submit" class="secondary">${esc(tr('login.resend'))}</button>
</form>
<form method="post" action="/login/change-address">
  ${carried}
  <button type="submit" class="secondary">${esc(tr('login.useDifferentAddress'))}</button>
</form>`,
  });
}

/** The consent page. `policyVersions`: the tenant's versions in force, which the consent will record. */
/**
 * What the consent page shows of a third-party client that registered itself (RFC 7591) or is
 * named by its metadata document: what the app says of itself, marked as not verified, and what
 * the user can check: the document's host and where the answer sends the browser.
 */
export interface ThirdPartyDisplay {
  /** A metadata document client: the host serving its document (what identifies it). */
  documentHost?: string;
  logoUri?: string;
  clientUri?: string;
  policyUri?: string;
  tosUri?: string;
  /** The host of the redirect URI of this request. */
  redirectHost: string;
}

const httpsOnly = (u: string | null | undefined): string | undefined =>
  u && /^https:\/\//i.test(u) && URL.canParse(u) ? u : undefined;

/** The display for a self-registered or document client; undefined for one an admin registered. */
export function thirdPartyOf(client: Client, redirectUri: string): ThirdPartyDisplay | undefined {
  if (client.first_party) return undefined;
  if (client.registered_via !== 'dynamic' && client.registered_via !== 'metadata_document') return undefined;
  return {
    ...(client.registered_via === 'metadata_document' ? { documentHost: new URL(client.client_id).host } : {}),
    logoUri: httpsOnly(client.logo_uri),
    clientUri: httpsOnly(client.client_uri),
    policyUri: httpsOnly(client.policy_uri),
    tosUri: httpsOnly(client.tos_uri),
    redirectHost: new URL(redirectUri).host,
  };
}

/** The third-party block of the consent page (empty for an admin-registered client). */
function thirdPartyBlock(locale: PageLook['locale'], clientName: string, d: ThirdPartyDisplay | undefined): string {
  if (!d) return '';
  const tr = translator(locale);
  const strong = (v: string) => `<strong>${esc(v)}</strong>`;
  const host = d.documentHost
    ? `<p class="client-host">${tHtml(locale, 'consent.documentHost', { host: strong(d.documentHost) })}</p>\n`
    : '';
  const logo = d.logoUri
    ? `<p><img src="${esc(d.logoUri)}" alt="${esc(tr('consent.logoAlt', { client: clientName }))}" height="48"></p>\n`
    : '';
  const links = (
    [
      [d.clientUri, 'consent.homepage'],
      [d.policyUri, 'consent.privacyPolicy'],
      [d.tosUri, 'consent.terms'],
    ] as const
  )
    .filter((l): l is readonly [string, (typeof l)[1]] => !!l[0])
    .map(([u, k]) => `<a href="${esc(u)}" rel="noopener noreferrer">${esc(tr(k))}</a>`)
    .join(' · ');
  const unverified = `<p class="hint">${esc(tr('consent.unverified'))}${links ? `: ${links}` : ''}</p>\n`;
  const redirect = `<p>${tHtml(locale, 'consent.redirectHost', { host: strong(d.redirectHost) })}</p>\n`;
  return `${host}${logo}${unverified}${redirect}`;
}

export function consentPage(
  ctx: ParameterizedContext,
  p: Common & {
    thirdParty?: ThirdPartyDisplay;
    scopes: string[];
    userEmail: string;
    policyVersions?: { privacyPolicyVersion?: string; tosVersion?: string };
  },
): void {
  const { locale } = p.look;
  const tr = translator(locale);
  // An admin scope is never something a user grants (/authorize refuses it before this page);
  // the filter keeps that true should a request carrying one ever get here.
  const items = scopeDescriptions(
    locale,
    p.scopes.filter((s) => !isAdminScope(s)),
  )
    .map((d) => `<li>${esc(d.description)}</li>`)
    .join('');
  const client = esc(p.clientName);
  const asks = tHtml(locale, 'consent.asks', { email: `<strong>${esc(p.userEmail)}</strong>`, client });
  renderPage(ctx, {
    title: tr('consent.title', { client: p.clientName }),
    locale,
    branding: p.look.branding,
    imageOrigins: p.thirdParty?.logoUri ? [new URL(p.thirdParty.logoUri).origin] : [],
    body: `<h1>${esc(tr('consent.heading', { client: p.clientName }))}</h1>
${thirdPartyBlock(locale, p.clientName, p.thirdParty)}<p>${asks}</p>
<ul>${items}</ul>
${policyLine(p.look, p.policyVersions)}<form method="post" action="/authorize/consent">
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <button type="submit" name="decision" value="allow">${esc(tr('consent.allow'))}</button>
  <button type="submit" name="decision" value="deny" class="secondary">${esc(tr('consent.deny'))}</button>
</form>`,
  });
}

/** Names the policy versions the consent records (docs/oauth.md, "Consent records"); empty without any. */
function policyLine(look: PageLook, v: { privacyPolicyVersion?: string; tosVersion?: string } | undefined): string {
  const privacy = v?.privacyPolicyVersion;
  const tos = v?.tosVersion;
  if (!privacy && !tos) return '';
  const key = privacy && tos ? 'consent.acceptsBoth' : privacy ? 'consent.acceptsPrivacy' : 'consent.acceptsTos';
  return `<p class="hint">${esc(translator(look.locale)(key, { privacy: privacy ?? '', tos: tos ?? '' }))}</p>\n`;
}
