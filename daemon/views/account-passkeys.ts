/**
 * The account page's passkey section and the step-up re-authentication pages
 * (docs/passkeys.md, "Pages"). The list, rename and remove are plain forms; adding a passkey
 * needs WebAuthn, so that form is rendered hidden and shown by the page's script (assets.ts).
 */
import type { ParameterizedContext } from 'koa';
import type { PasskeyView } from '../../shared/services/auth/passkeys.js';
import { esc, renderPage } from './html.js';

const when = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return `<time datetime="${esc(iso)}">${esc(iso.replace('T', ' ').slice(0, 16))} UTC</time>`;
};

/** How the list names the kind of passkey: whether it may be copied to the user's other devices. */
export function passkeyKind(p: Pick<PasskeyView, 'deviceType' | 'backedUp'>): string {
  return p.deviceType === 'multiDevice' || p.backedUp ? 'Synced passkey' : 'Device-bound passkey';
}

/**
 * The "Passkeys" section: each passkey with its name, kind, creation and last use, a rename
 * form and a remove button; then "Add a passkey", or, when the session's sign-in is older
 * than the step-up window (`stale`), the link to confirm it is the user first.
 */
export function passkeySection(p: { passkeys: PasskeyView[]; csrf: string; stale: boolean }): string {
  const hidden = `<input type="hidden" name="csrf" value="${esc(p.csrf)}">`;
  const items = p.passkeys
    .map((k) => {
      const name = esc(k.name);
      return `<li>
  <strong>${name}</strong><br>
  <span class="hint">${esc(passkeyKind(k))} · added ${when(k.createdAt)} · ${
    k.lastUsedAt ? `last used ${when(k.lastUsedAt)}` : 'never used'
  }</span><br>
  <details><summary>Rename<span class="skip"> ${name}</span></summary>
    <form method="post" action="/account/passkeys/${esc(k.id)}/rename">${hidden}
      <label for="rename-${esc(k.id)}">New name</label>
      <input id="rename-${esc(k.id)}" name="name" type="text" maxlength="64" required value="${name}">
      <button type="submit" class="secondary">Save name</button>
    </form>
  </details>
  <form method="post" action="/account/passkeys/${esc(k.id)}/delete">${hidden}
    <button type="submit" class="secondary" aria-label="Remove ${name}">Remove</button></form>
</li>`;
    })
    .join('\n');
  const list = p.passkeys.length
    ? `<ul class="passkeys" aria-labelledby="passkeys">\n${items}\n</ul>`
    : '<p>You have no passkeys yet.</p>';
  return `<h2 id="passkeys">Passkeys</h2>
<p class="hint">A passkey signs you in with your device's screen lock or security key instead of an email code.</p>
${list}
<div id="passkey-add" hidden data-csrf="${esc(p.csrf)}">
  <form id="passkey-add-form" novalidate${p.stale ? ' hidden' : ''}>
    <label for="passkey-name">Name of the new passkey</label>
    <input id="passkey-name" name="name" type="text" maxlength="64" required autocomplete="off"
      aria-describedby="passkey-name-hint">
    <p class="hint" id="passkey-name-hint">For instance the device it is on, like "Work laptop".</p>
    <button type="submit">Add a passkey</button>
  </form>
  <p id="passkey-step-up"${p.stale ? '' : ' hidden'}>To add a passkey, first
    <a href="/account/reauth">confirm it is you with an email code</a>.</p>
  <p id="passkey-add-message" role="alert" hidden></p>
</div>
<p id="passkey-unsupported" hidden>This browser cannot create passkeys.</p>
<noscript><p class="hint">Adding a passkey needs JavaScript.</p></noscript>`;
}

/** GET /account/reauth: what will happen, and the button that sends the code. */
export function reauthStartPage(
  ctx: ParameterizedContext,
  p: { email: string; csrf: string; error?: string; status?: number },
): void {
  const err = p.error ? `<p class="error" role="alert">${esc(p.error)}</p>` : '';
  renderPage(ctx, {
    title: 'Confirm it is you',
    status: p.status,
    body: `<h1>Confirm it is you</h1>
<p>Before you add a passkey or change your address, confirm that this is your account. We will email a
six-digit code to
<strong>${esc(p.email)}</strong>.</p>
${err}
<form method="post" action="/account/reauth/send">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <button type="submit">Email me a code</button>
</form>
<p><a href="/account">Back to your account</a></p>`,
  });
}

/** The code step of the re-authentication (POST /account/reauth/send, or a refused code). */
export function reauthCodePage(
  ctx: ParameterizedContext,
  p: { email: string; csrf: string; error?: string; notice?: string; status?: number },
): void {
  const err = p.error ? `<p id="code-error" class="error" role="alert">${esc(p.error)}</p>` : '';
  const notice = p.notice ? `<p role="status">${esc(p.notice)}</p>` : '';
  renderPage(ctx, {
    title: 'Enter your code',
    status: p.status,
    body: `<h1>Check your email</h1>
${notice}
<p class="hint" id="code-hint">We sent a six-digit code to <strong>${esc(p.email)}</strong>.
It expires in 10 minutes.</p>
<form method="post" action="/account/reauth/verify" novalidate>
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <label for="code">Confirmation code</label>
  <input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6}"
    maxlength="6" required autofocus
    aria-describedby="code-hint${p.error ? ' code-error' : ''}"${p.error ? ' aria-invalid="true"' : ''}>
  ${err}
  <button type="submit">Confirm</button>
</form>
<form method="post" action="/account/reauth/send">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <button type="submit" class="secondary">Send a new code</button>
</form>
<p><a href="/account">Back to your account</a></p>`,
  });
}
