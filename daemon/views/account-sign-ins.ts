/**
 * The account page's "Recent sign-ins" section (docs/directory.md, "Sign-in history"): the
 * user's latest sign-in attempts with the device (the user agent, parsed locally), the time,
 * the method and the result, a failure with its reason in words. The place is the IP address
 * only: no geolocation database is shipped, and looking one up elsewhere would send the
 * user's addresses to a third party.
 */
import type { SignInView } from '../../shared/services/sign-ins.js';
import { esc } from './html.js';

/** How many of the latest attempts the page shows (GET /api/account/sign-ins pages further). */
export const ACCOUNT_SIGN_INS = 10;

const METHODS: Record<SignInView['method'], string> = {
  email_code: 'Email code',
  passkey: 'Passkey',
  upstream: 'Another provider',
  artifact: 'App sign-in',
};

/** The reasons a user may see in words; any other reads as "refused". */
const REASONS: Record<string, string> = {
  wrong_code: 'wrong code',
  code_expired: 'code expired',
  no_code: 'no code requested',
  attempts_exhausted: 'too many attempts',
  already_used: 'code already used',
  address_locked: 'temporarily locked',
  throttled: 'too many attempts',
  user_disabled: 'account disabled',
  unknown_credential: 'unknown passkey',
  signature_invalid: 'passkey not verified',
};

const HEADINGS =
  '<th scope="col">Device</th><th scope="col">Time</th><th scope="col">Method</th>' +
  '<th scope="col">Result</th><th scope="col">IP address</th>';

export function signInSection(signIns: SignInView[]): string {
  if (!signIns.length) return '<h2 id="sign-ins">Recent sign-ins</h2>\n<p>No sign-in recorded yet.</p>';
  const rows = signIns
    .map((s) => {
      const iso = new Date(s.created_at).toISOString();
      const result = s.result === 'success' ? 'Signed in' : `Failed (${esc(REASONS[s.reason ?? ''] ?? 'refused')})`;
      return `<tr class="sign-in-${s.result}">
  <td>${esc(s.device)}</td>
  <td><time datetime="${esc(iso)}">${esc(iso.replace('T', ' ').slice(0, 16))} UTC</time></td>
  <td>${esc(METHODS[s.method])}</td>
  <td>${result}</td>
  <td>${esc(s.ip ?? '')}</td>
</tr>`;
    })
    .join('\n');
  return `<h2 id="sign-ins">Recent sign-ins</h2>
<table aria-labelledby="sign-ins"><thead><tr>${HEADINGS}</tr></thead>
<tbody>${rows}</tbody></table>`;
}
