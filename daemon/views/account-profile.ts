/**
 * The account page's profile (routes/account/profile.ts): the name form and the address
 * change (the new address, then the code sent to it). Plain forms with the page's CSRF token:
 * nothing here needs JavaScript. Words from shared/i18n/catalogues/account.ts.
 */
import type { ParameterizedContext } from 'koa';
import { translator, type Locale, type Translate } from '../../shared/i18n/index.js';
import { esc, renderPage } from './html.js';
import { fill } from './page-i18n.js';

const hidden = (csrf: string) => `<input type="hidden" name="csrf" value="${esc(csrf)}">`;

/** The Profile section of /account: the name form, the address and the form that changes it. */
export function profileSection(
  p: { name: string; email: string; verified: boolean; csrf: string; stale: boolean },
  locale: Locale,
) {
  const tr = translator(locale);
  const state = tr(p.verified ? 'account.profile.verified' : 'account.profile.unverified');
  return `<h2 id="profile">${esc(tr('account.profile.heading'))}</h2>
<form method="post" action="/account/profile/name">
  ${hidden(p.csrf)}
  <label for="profile-name">${esc(tr('account.profile.name'))}</label>
  <input id="profile-name" name="name" type="text" autocomplete="name" maxlength="200" required
    value="${esc(p.name)}">
  <button type="submit">${esc(tr('account.profile.saveName'))}</button>
</form>
<h3 id="address">${esc(tr('account.profile.address'))}</h3>
<p>${fill(tr, 'account.profile.signInWith', { email: `<strong>${esc(p.email)}</strong>`, state: esc(state) })}</p>
${emailForm(tr, p.csrf, p.stale)}`;
}

function emailForm(tr: Translate, csrf: string, stale: boolean, error?: string, value = ''): string {
  const err = error ? `<p id="email-error" class="error" role="alert">${esc(error)}</p>` : '';
  const confirm = stale
    ? ' ' +
      fill(tr, 'account.profile.confirmFirst', {
        link: `<a href="/account/reauth">${esc(tr('account.profile.confirmLink'))}</a>`,
      })
    : '';
  return `<form method="post" action="/account/email/send" novalidate>
  ${hidden(csrf)}
  <label for="new-email">${esc(tr('account.profile.newAddress'))}</label>
  <input id="new-email" name="email" type="email" autocomplete="email" maxlength="254" required value="${esc(value)}"
    aria-describedby="email-hint${error ? ' email-error' : ''}"${error ? ' aria-invalid="true"' : ''}>
  <p class="hint" id="email-hint">${esc(tr('account.profile.newAddressHint'))}${confirm}</p>
  ${err}
  <button type="submit">${esc(tr('account.profile.sendCode'))}</button>
</form>`;
}

const back = (tr: Translate) => `<p><a href="/account#profile">${esc(tr('account.back'))}</a></p>`;

/** The new-address form again, with what was wrong (bad address, a budget spent, a stale sign-in). */
export function emailFormPage(
  ctx: ParameterizedContext,
  p: { csrf: string; error: string; status: number; value?: string; stale?: boolean; locale: Locale },
): void {
  const tr = translator(p.locale);
  renderPage(ctx, {
    title: tr('account.email.title'),
    status: p.status,
    locale: p.locale,
    body: `<h1>${esc(tr('account.email.title'))}</h1>
${emailForm(tr, p.csrf, p.stale ?? false, p.error, p.value)}
${back(tr)}`,
  });
}

/** The code step of the address change: the code sent to the new address. */
export function emailCodePage(
  ctx: ParameterizedContext,
  p: { email: string; csrf: string; error?: string; notice?: string; status?: number; locale: Locale },
): void {
  const tr = translator(p.locale);
  const err = p.error ? `<p id="code-error" class="error" role="alert">${esc(p.error)}</p>` : '';
  const notice = p.notice ? `<p role="status">${esc(p.notice)}</p>` : '';
  const email = `<input type="hidden" name="email" value="${esc(p.email)}">`;
  renderPage(ctx, {
    title: tr('account.email.confirmTitle'),
    status: p.status,
    locale: p.locale,
    body: `<h1>${esc(tr('account.email.confirmTitle'))}</h1>
${notice}
<p class="hint" id="code-hint">${fill(tr, 'account.email.sent', { email: `<strong>${esc(p.email)}</strong>` })}</p>
<form method="post" action="/account/email/confirm" novalidate>
  ${hidden(p.csrf)}
  ${email}
  <label for="code">${esc(tr('account.code.label'))}</label>
  <input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6}"
    maxlength="6" required autofocus
    aria-describedby="code-hint${p.error ? ' code-error' : ''}"${p.error ? ' aria-invalid="true"' : ''}>
  ${err}
  <button type="submit">${esc(tr('account.code.confirm'))}</button>
</form>
<form method="post" action="/account/email/send">
  ${hidden(p.csrf)}
  ${email}
  <button type="submit" class="secondary">${esc(tr('account.code.resend'))}</button>
</form>
${back(tr)}`,
  });
}
