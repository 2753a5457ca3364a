/**
 * The account page's passkey section and the step-up re-authentication pages
 * (docs/passkeys.md, "Pages"). The list, rename and remove are plain forms; adding a passkey
 * needs WebAuthn, so that form is rendered hidden and shown by the page's script (assets.ts).
 */
import type { ParameterizedContext } from 'koa';
import { translator, type Locale, type Translate } from '../../shared/i18n/index.js';
import type { PasskeyView } from '../../shared/services/auth/passkeys.js';
import { esc, renderPage } from './html.js';
import { fill, when } from './page-i18n.js';

/** How the list names the kind of passkey: whether it may be copied to the user's other devices. */
export function passkeyKind(p: Pick<PasskeyView, 'deviceType' | 'backedUp'>, tr: Translate): string {
  return tr(p.deviceType === 'multiDevice' || p.backedUp ? 'account.passkeys.synced' : 'account.passkeys.bound');
}

/**
 * The "Passkeys" section: each passkey with its name, kind, creation and last use, a rename
 * form and a remove button; then "Add a passkey", or, when the session's sign-in is older
 * than the step-up window (`stale`), the link to confirm it is the user first.
 */
export function passkeySection(p: { passkeys: PasskeyView[]; csrf: string; stale: boolean }, locale: Locale): string {
  const tr = translator(locale);
  const hidden = `<input type="hidden" name="csrf" value="${esc(p.csrf)}">`;
  const items = p.passkeys
    .map((k) => {
      const name = esc(k.name);
      const removeLabel = esc(tr('account.passkeys.removeLabel', { name: k.name }));
      const used = k.lastUsedAt
        ? fill(tr, 'account.passkeys.lastUsed', { date: when(locale, k.lastUsedAt) })
        : esc(tr('account.passkeys.neverUsed'));
      return `<li>
  <strong>${name}</strong><br>
  <span class="hint">${esc(passkeyKind(k, tr))} · ${fill(tr, 'account.passkeys.added', {
    date: when(locale, k.createdAt),
  })} · ${used}</span><br>
  <details><summary>${esc(tr('account.passkeys.rename'))}<span class="skip"> ${name}</span></summary>
    <form method="post" action="/account/passkeys/${esc(k.id)}/rename">${hidden}
      <label for="rename-${esc(k.id)}">${esc(tr('account.passkeys.newName'))}</label>
      <input id="rename-${esc(k.id)}" name="name" type="text" maxlength="64" required value="${name}">
      <button type="submit" class="secondary">${esc(tr('account.passkeys.saveName'))}</button>
    </form>
  </details>
  <form method="post" action="/account/passkeys/${esc(k.id)}/delete">${hidden}
    <button type="submit" class="secondary" aria-label="${removeLabel}">${esc(tr('account.passkeys.remove'))}</button>
  </form>
</li>`;
    })
    .join('\n');
  const list = p.passkeys.length
    ? `<ul class="passkeys" aria-labelledby="passkeys">\n${items}\n</ul>`
    : `<p>${esc(tr('account.passkeys.none'))}</p>`;
  const stepUp = fill(tr, 'account.passkeys.stepUp', {
    link: `<a href="/account/reauth">${esc(tr('account.passkeys.stepUpLink'))}</a>`,
  });
  return `<h2 id="passkeys">${esc(tr('account.passkeys.heading'))}</h2>
<p class="hint">${esc(tr('account.passkeys.intro'))}</p>
${list}
<div id="passkey-add" hidden data-csrf="${esc(p.csrf)}">
  <form id="passkey-add-form" novalidate${p.stale ? ' hidden' : ''}>
    <label for="passkey-name">${esc(tr('account.passkeys.addName'))}</label>
    <input id="passkey-name" name="name" type="text" maxlength="64" required autocomplete="off"
      aria-describedby="passkey-name-hint">
    <p class="hint" id="passkey-name-hint">${esc(tr('account.passkeys.addNameHint'))}</p>
    <button type="submit">${esc(tr('account.passkeys.add'))}</button>
  </form>
  <p id="passkey-step-up"${p.stale ? '' : ' hidden'}>${stepUp}</p>
  <p id="passkey-add-message" role="alert" hidden></p>
</div>
<p id="passkey-unsupported" hidden>${esc(tr('account.passkeys.unsupported'))}</p>
<noscript><p class="hint">${esc(tr('account.passkeys.needsScript'))}</p></noscript>`;
}

/** GET /account/reauth: what will happen, and the button that sends the code. */
export function reauthStartPage(
  ctx: ParameterizedContext,
  p: { email: string; csrf: string; error?: string; status?: number; locale: Locale },
): void {
  const tr = translator(p.locale);
  const err = p.error ? `<p class="error" role="alert">${esc(p.error)}</p>` : '';
  renderPage(ctx, {
    title: tr('account.reauth.title'),
    status: p.status,
    locale: p.locale,
    body: `<h1>${esc(tr('account.reauth.title'))}</h1>
<p>${fill(tr, 'account.reauth.text', { email: `<strong>${esc(p.email)}</strong>` })}</p>
${err}
<form method="post" action="/account/reauth/send">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <button type="submit">${esc(tr('account.reauth.send'))}</button>
</form>
<p><a href="/account">${esc(tr('account.back'))}</a></p>`,
  });
}

/** The code step of the re-authentication (POST /account/reauth/send, or a refused code). */
export function reauthCodePage(
  ctx: ParameterizedContext,
  p: { email: string; csrf: string; error?: string; notice?: string; status?: number; locale: Locale },
): void {
  const tr = translator(p.locale);
  const err = p.error ? `<p id="code-error" class="error" role="alert">${esc(p.error)}</p>` : '';
  const notice = p.notice ? `<p role="status">${esc(p.notice)}</p>` : '';
  renderPage(ctx, {
    title: tr('account.reauth.codeTitle'),
    status: p.status,
    locale: p.locale,
    body: `<h1>${esc(tr('account.reauth.codeHeading'))}</h1>
${notice}
<p class="hint" id="code-hint">${fill(tr, 'account.reauth.sent', { email: `<strong>${esc(p.email)}</strong>` })}</p>
<form method="post" action="/account/reauth/verify" novalidate>
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <label for="code">${esc(tr('account.code.label'))}</label>
  <input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6}"
    maxlength="6" required autofocus
    aria-describedby="code-hint${p.error ? ' code-error' : ''}"${p.error ? ' aria-invalid="true"' : ''}>
  ${err}
  <button type="submit">${esc(tr('account.code.confirm'))}</button>
</form>
<form method="post" action="/account/reauth/send">
  <input type="hidden" name="csrf" value="${esc(p.csrf)}">
  <button type="submit" class="secondary">${esc(tr('account.code.resend'))}</button>
</form>
<p><a href="/account">${esc(tr('account.back'))}</a></p>`,
  });
}
