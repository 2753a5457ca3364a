import type { ParameterizedContext } from 'koa';
import { isAdminScope } from '../../shared/scopes.js';
import { PASSKEY_SCRIPTS } from './assets.js';
import { esc, renderPage } from './html.js';

interface Common {
  challenge: string;
  csrf: string;
  clientName: string;
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
  const forms = p.providers
    .map(
      (b) => `<form method="post" action="/login/upstream/start">
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <input type="hidden" name="provider" value="${esc(b.slug)}">
  <button type="submit" class="secondary">Continue with ${esc(b.name)}</button>
</form>`,
    )
    .join('\n');
  return `\n<p class="hint">Or</p>\n${forms}`;
}

/**
 * "Sign in with a passkey" (docs/passkeys.md, "Pages"): rendered hidden, shown by the page's
 * script when the browser can do WebAuthn, so without JavaScript the page is the email form
 * alone. The script posts the authorization request and its CSRF token, as the forms do.
 */
function passkeyButton(p: Common): string {
  return `<div id="passkey-login" hidden data-challenge="${esc(p.challenge)}" data-csrf="${esc(p.csrf)}">
  <p class="hint">Or</p>
  <button type="button" id="passkey-button" class="secondary">Sign in with a passkey</button>
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
  const err = p.error ? `<p id="email-error" class="error" role="alert">${esc(p.error)}</p>` : '';
  renderPage(ctx, {
    title: `Sign in to ${p.clientName}`,
    status: p.status,
    scripts: PASSKEY_SCRIPTS,
    body: `<h1>Sign in to ${esc(p.clientName)}</h1>
<p class="hint" id="email-hint">We will email you a six-digit code.</p>
<form method="post" action="/login/email-code" novalidate>
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <label for="email">Email address</label>
  <input id="email" name="email" type="email" autocomplete="username webauthn" inputmode="email" required autofocus
    value="${esc(p.email ?? '')}" aria-describedby="email-hint${p.error ? ' email-error' : ''}"${
      p.error ? ' aria-invalid="true"' : ''
    }>
  ${err}
  <button type="submit">Email me a code</button>
</form>
${passkeyButton(p)}${providerButtons(p)}`,
  });
}

/** Step 2: the code, one field with `autocomplete=one-time-code` (autofill from mail/SMS apps). */
export function codeStep(
  ctx: ParameterizedContext,
  p: Common & { email: string; error?: string; notice?: string; status?: number },
): void {
  const err = p.error ? `<p id="code-error" class="error" role="alert">${esc(p.error)}</p>` : '';
  const notice = p.notice ? `<p role="status">${esc(p.notice)}</p>` : '';
  renderPage(ctx, {
    title: `Enter your code — ${p.clientName}`,
    status: p.status,
    body: `<h1>Check your email</h1>
${notice}
<p class="hint" id="code-hint">We sent a six-digit code to <strong>${esc(p.email)}</strong> if it belongs to an account.
It expires in 10 minutes.</p>
<form method="post" action="/login/verify" novalidate>
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <input type="hidden" name="email" value="${esc(p.email)}">
  <label for="code">Sign-in code</label>
  <input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6}"
    maxlength="6" required autofocus
    aria-describedby="code-hint${p.error ? ' code-error' : ''}"${p.error ? ' aria-invalid="true"' : ''}>
  ${err}
  <button type="submit">Sign in</button>
</form>
<form method="post" action="/login/email-code">
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <input type="hidden" name="email" value="${esc(p.email)}">
  <button type="submit" class="secondary">Send a new code</button>
</form>
<form method="post" action="/login/change-address">
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <input type="hidden" name="email" value="${esc(p.email)}">
  <button type="submit" class="secondary">Use a different address</button>
</form>`,
  });
}

/** The consent page. `policyVersions`: the tenant's versions in force, which the consent will record. */
export function consentPage(
  ctx: ParameterizedContext,
  p: Common & {
    scopes: string[];
    userEmail: string;
    policyVersions?: { privacyPolicyVersion?: string; tosVersion?: string };
  },
): void {
  // An admin scope is never something a user grants (/authorize refuses it before this page);
  // the filter keeps that true should a request carrying one ever get here.
  const items = p.scopes
    .filter((s) => !isAdminScope(s))
    .map((s) => `<li>${esc(SCOPE_TEXT[s] ?? s)}</li>`)
    .join('');
  renderPage(ctx, {
    title: `Allow ${p.clientName}?`,
    body: `<h1>Allow ${esc(p.clientName)} to access your account?</h1>
<p>Signed in as <strong>${esc(p.userEmail)}</strong>. ${esc(p.clientName)} asks to:</p>
<ul>${items}</ul>
${policyLine(p.policyVersions)}<form method="post" action="/authorize/consent">
  <input type="hidden" name="challenge" value="${esc(p.challenge)}">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <button type="submit" name="decision" value="allow">Allow</button>
  <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  });
}

/** Names the policy versions the consent records (docs/oauth.md, "Consent records"); empty without any. */
function policyLine(v: { privacyPolicyVersion?: string; tosVersion?: string } | undefined): string {
  const parts = [
    ...(v?.privacyPolicyVersion ? [`the privacy policy (version ${esc(v.privacyPolicyVersion)})`] : []),
    ...(v?.tosVersion ? [`the terms of service (version ${esc(v.tosVersion)})`] : []),
  ];
  return parts.length ? `<p class="hint">Allowing accepts ${parts.join(' and ')}.</p>\n` : '';
}

export const SCOPE_TEXT: Record<string, string> = {
  openid: 'Know who you are',
  profile: 'See your name',
  email: 'See your email address',
  address: 'See your postal address',
  phone: 'See your phone number',
  offline_access: 'Stay signed in when you are away',
};
