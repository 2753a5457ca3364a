/**
 * The account page's "Devices" and "Apps with access" sections. A device is one browser
 * session, told apart from the user's others by its browser and OS (parsed locally from the
 * user agent), when it signed in, when it was last active, the address it signed in from (the
 * place: no geolocation database is shipped, see account-sign-ins.ts) and the app that last used
 * it; this browser's own is marked. An app is a consent, its scopes in the consent page's own
 * words (shared/i18n/scopes.ts, one source, in the page's language). Both are tables that become one card per row
 * on a narrow screen (`table.stack`, style.ts).
 */
import { isAdminScope } from '../../shared/scopes.js';
import { translator, type Locale, type Translate } from '../../shared/i18n/index.js';
import type { ConsentView, DeviceDetail } from '../../shared/services/auth/account.js';
import { esc } from './html.js';
import { scopeDescriptions } from '../../shared/i18n/scopes.js';
import { when } from './page-i18n.js';

/** The device's name in the page's language: "Firefox on Linux". */
export function deviceName(d: Pick<DeviceDetail, 'browser' | 'os'>, tr: Translate): string {
  if (d.browser && d.os) return tr('account.devices.name', { browser: d.browser, os: d.os });
  if (d.browser) return tr('account.devices.browserOnly', { browser: d.browser });
  if (d.os) return tr('account.devices.osOnly', { os: d.os });
  return tr('account.devices.unknown');
}

const cell = (label: string, html: string) => `<td data-label="${esc(label)}">${html}</td>`;
const heads = (labels: string[], tr: Translate) =>
  labels.map((l) => `<th scope="col">${esc(l)}</th>`).join('') +
  `<th scope="col"><span class="sr-only">${esc(tr('account.action'))}</span></th>`;

export function devicesSection(devices: DeviceDetail[], csrf: string, locale: Locale): string {
  const tr = translator(locale);
  const hidden = `<input type="hidden" name="csrf" value="${esc(csrf)}">`;
  const L = {
    device: tr('account.devices.device'),
    first: tr('account.devices.firstSeen'),
    last: tr('account.devices.lastSeen'),
    place: tr('account.devices.place'),
    app: tr('account.devices.app'),
  };
  const signOut = esc(tr('account.devices.signOut'));
  const rows = devices
    .map((d) => {
      const name = deviceName(d, tr);
      const mine = d.current ? ` <strong class="badge">${esc(tr('account.devices.thisDevice'))}</strong>` : '';
      const label =
        tr('account.devices.signOutLabel', { device: name }) +
        (d.current ? ` ${tr('account.devices.thisDevice')}` : '');
      return `<tr>
  ${cell(L.device, `${esc(name)}${mine}`)}
  ${cell(L.first, when(locale, d.first_seen))}
  ${cell(L.last, d.last_seen !== undefined ? when(locale, d.last_seen) : '')}
  ${cell(L.place, esc(d.ip ?? tr('account.devices.unknownPlace')))}
  ${cell(L.app, esc(d.app_display_name ?? ''))}
  <td><form method="post" action="/account/devices/${esc(d.id)}/sign-out">${hidden}
    <button type="submit" class="secondary" aria-label="${esc(label)}">${signOut}</button></form></td>
</tr>`;
    })
    .join('\n');
  return `<h2 id="devices">${esc(tr('account.devices.heading'))}</h2>
<p class="hint">${esc(tr('account.devices.intro'))}</p>
<table class="stack" aria-labelledby="devices"><thead><tr>${heads(Object.values(L), tr)}</tr></thead>
<tbody>${rows}</tbody></table>`;
}

export function appsSection(consents: ConsentView[], csrf: string, locale: Locale): string {
  const tr = translator(locale);
  const heading = `<h2 id="consents">${esc(tr('account.apps.heading'))}</h2>`;
  if (!consents.length) return `${heading}\n<p>${esc(tr('account.apps.none'))}</p>`;
  const hidden = `<input type="hidden" name="csrf" value="${esc(csrf)}">`;
  const L = { app: tr('account.apps.app'), access: tr('account.apps.access'), since: tr('account.apps.since') };
  const rows = consents
    .map((c) => {
      const app = c.clientName ?? c.clientId;
      // An admin scope is never granted by a user (the consent page filters it the same way).
      const access = scopeDescriptions(
        locale,
        c.scopes.filter((s) => !isAdminScope(s)),
      )
        .map((s) => `<li>${esc(s.description)}</li>`)
        .join('');
      return `<tr>
  ${cell(L.app, `<strong>${esc(app)}</strong>`)}
  ${cell(L.access, `<ul>${access}</ul>`)}
  ${cell(L.since, when(locale, c.grantedAt))}
  <td><form method="post" action="/account/consents/${esc(c.id)}/withdraw">${hidden}
    <button type="submit" class="secondary" aria-label="${esc(tr('account.apps.removeLabel', { app }))}">${esc(
      tr('account.apps.remove'),
    )}</button></form></td>
</tr>`;
    })
    .join('\n');
  return `${heading}
<table class="stack" aria-labelledby="consents"><thead><tr>${heads(Object.values(L), tr)}</tr></thead>
<tbody>${rows}</tbody></table>`;
}
