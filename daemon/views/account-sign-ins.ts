/**
 * The account page's "Recent sign-ins" section (docs/directory.md, "Sign-in history"): the
 * user's latest sign-in attempts with the device (the user agent, parsed locally), the time,
 * the method and the result, a failure with its reason in words. The place is the IP address
 * only: no geolocation database is shipped, and looking one up elsewhere would send the
 * user's addresses to a third party. Words from shared/i18n/catalogues/account.ts.
 */
import type { Locale } from '../../shared/i18n/index.js';
import { translator } from '../../shared/i18n/index.js';
import type { SignInView } from '../../shared/services/sign-ins.js';
import { esc } from './html.js';
import { when } from './page-i18n.js';

/** How many of the latest attempts the page shows (GET /api/account/sign-ins pages further). */
export const ACCOUNT_SIGN_INS = 10;

/** The reasons a user may see in words; any other reads as "refused". */
const REASONS = new Set([
  'wrong_code',
  'code_expired',
  'no_code',
  'attempts_exhausted',
  'already_used',
  'address_locked',
  'throttled',
  'user_disabled',
  'unknown_credential',
  'signature_invalid',
]);

export function signInSection(signIns: SignInView[], locale: Locale): string {
  const tr = translator(locale);
  const heading = `<h2 id="sign-ins">${esc(tr('account.signIns.heading'))}</h2>`;
  if (!signIns.length) return `${heading}\n<p>${esc(tr('account.signIns.none'))}</p>`;
  const labels = {
    device: esc(tr('account.signIns.device')),
    time: esc(tr('account.signIns.time')),
    method: esc(tr('account.signIns.method')),
    result: esc(tr('account.signIns.result')),
    ip: esc(tr('account.signIns.ip')),
  };
  const rows = signIns
    .map((s) => {
      const reason = REASONS.has(s.reason ?? '') ? s.reason! : 'refused';
      const result =
        s.result === 'success'
          ? tr('account.signIns.success')
          : tr('account.signIns.failed', { reason: tr(`account.signIns.reason.${reason}`) });
      return `<tr class="sign-in-${s.result}">
  <td data-label="${labels.device}">${esc(s.device)}</td>
  <td data-label="${labels.time}">${when(locale, s.created_at)}</td>
  <td data-label="${labels.method}">${esc(tr(`account.signIns.method.${s.method}`))}</td>
  <td data-label="${labels.result}">${esc(result)}</td>
  <td data-label="${labels.ip}">${esc(s.ip ?? '')}</td>
</tr>`;
    })
    .join('\n');
  const head = Object.values(labels)
    .map((l) => `<th scope="col">${l}</th>`)
    .join('');
  return `${heading}
<table class="stack" aria-labelledby="sign-ins"><thead><tr>${head}</tr></thead>
<tbody>${rows}</tbody></table>`;
}
