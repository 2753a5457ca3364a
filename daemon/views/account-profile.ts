/**
 * The account page's profile (routes/account/profile.ts): the name form and the address
 * change (the new address, then the code sent to it). Plain forms with the page's CSRF token:
 * nothing here needs JavaScript.
 */
import type { ParameterizedContext } from 'koa';
import { esc, renderPage } from './html.js';

const hidden = (csrf: string) => `<input type="hidden" name="csrf" value="${esc(csrf)}">`;

/** The Profile section of /account: the name form, the address and the form that changes it. */
export function profileSection(p: { name: string; email: string; verified: boolean; csrf: string; stale: boolean }) {
  return `<h2 id="profile">Profile</h2>
<form method="post" action="/account/profile/name">
  ${hidden(p.csrf)}
  <label for="profile-name">Name</label>
  <input id="profile-name" name="name" type="text" autocomplete="name" maxlength="200" required
    value="${esc(p.name)}">
  <button type="submit">Save name</button>
</form>
<h3 id="address">Email address</h3>
<p>You sign in with <strong>${esc(p.email)}</strong>${p.verified ? ' (verified)' : ' (not verified)'}.</p>
${emailForm(p.csrf, p.stale)}`;
}

function emailForm(csrf: string, stale: boolean, error?: string, value = ''): string {
  const err = error ? `<p id="email-error" class="error" role="alert">${esc(error)}</p>` : '';
  return `<form method="post" action="/account/email/send" novalidate>
  ${hidden(csrf)}
  <label for="new-email">New address</label>
  <input id="new-email" name="email" type="email" autocomplete="email" maxlength="254" required value="${esc(value)}"
    aria-describedby="email-hint${error ? ' email-error' : ''}"${error ? ' aria-invalid="true"' : ''}>
  <p class="hint" id="email-hint">We will email a code to the new address; your address changes when you enter it.${
    stale ? ' You will first be asked to <a href="/account/reauth">confirm it is you</a>.' : ''
  }</p>
  ${err}
  <button type="submit">Send a code</button>
</form>`;
}

/** The new-address form again, with what was wrong (bad address, a budget spent, a stale sign-in). */
export function emailFormPage(
  ctx: ParameterizedContext,
  p: { csrf: string; error: string; status: number; value?: string; stale?: boolean },
): void {
  renderPage(ctx, {
    title: 'Change your address',
    status: p.status,
    body: `<h1>Change your address</h1>
${emailForm(p.csrf, p.stale ?? false, p.error, p.value)}
<p><a href="/account#profile">Back to your account</a></p>`,
  });
}

/** The code step of the address change: the code sent to the new address. */
export function emailCodePage(
  ctx: ParameterizedContext,
  p: { email: string; csrf: string; error?: string; notice?: string; status?: number },
): void {
  const err = p.error ? `<p id="code-error" class="error" role="alert">${esc(p.error)}</p>` : '';
  const notice = p.notice ? `<p role="status">${esc(p.notice)}</p>` : '';
  const email = `<input type="hidden" name="email" value="${esc(p.email)}">`;
  renderPage(ctx, {
    title: 'Confirm your new address',
    status: p.status,
    body: `<h1>Confirm your new address</h1>
${notice}
<p class="hint" id="code-hint">We sent a six-digit code to <strong>${esc(p.email)}</strong>.
It expires in 10 minutes. Your address changes when you enter it.</p>
<form method="post" action="/account/email/confirm" novalidate>
  ${hidden(p.csrf)}
  ${email}
  <label for="code">Confirmation code</label>
  <input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6}"
    maxlength="6" required autofocus
    aria-describedby="code-hint${p.error ? ' code-error' : ''}"${p.error ? ' aria-invalid="true"' : ''}>
  ${err}
  <button type="submit">Confirm</button>
</form>
<form method="post" action="/account/email/send">
  ${hidden(p.csrf)}
  ${email}
  <button type="submit" class="secondary">Send a new code</button>
</form>
<p><a href="/account#profile">Back to your account</a></p>`,
  });
}
