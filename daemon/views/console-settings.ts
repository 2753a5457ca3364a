/**
 * Small views shared by the console's settings pages (identity providers, custom claims,
 * plugins, token exchange, email; daemon/routes/console/settings-*.ts): a definition list, a
 * time, yes/no, and the refusal sentence a re-rendered form shows above its fields.
 */
import { tenantPath, utc } from './console.js';
import { esc } from './html.js';

/** A tenant's console base path. */
export const tenantBase = (t: { id: string }) => tenantPath(t.id);

/** A `<dl>` of label → value; values are trusted markup (escape them first). */
export const details = (rows: [string, string][]) =>
  `<dl>${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;

/** A time to the minute, UTC. */
export const when = (ms: number | null | undefined) => (ms ? utc(ms) : '—');

export const yesNo = (b: boolean | number | undefined) => (b ? 'yes' : 'no');

/** A list of codes, or `none`. */
export const codes = (xs: readonly string[], none = 'none') =>
  xs.length ? xs.map((x) => `<code>${esc(x)}</code>`).join(', ') : esc(none);

/** The service's refusal above a re-rendered form (status 4xx), or nothing. */
export const formError = (message?: string) =>
  message ? `<p class="error" role="alert" id="form-error">${esc(message)}</p>` : '';

/** `aria-describedby` of an input when the form carries a refusal. */
export const describedBy = (message?: string) => (message ? ' aria-invalid="true" aria-describedby="form-error"' : '');

/** A checkbox with its label after it (value 1). */
export const checkbox = (name: string, label: string, on: boolean) =>
  `<label for="${esc(name)}"><input id="${esc(name)}" name="${esc(name)}" type="checkbox" value="1"${
    on ? ' checked' : ''
  }> ${esc(label)}</label>`;

/** A whole-number input (text with a numeric keyboard: the service's schema checks the range). */
export const numberInput = (name: string, label: string, value: number, attrs = '') =>
  `<label for="${esc(name)}">${esc(label)}</label>
<input id="${esc(name)}" name="${esc(name)}" type="text" inputmode="numeric" value="${value}"${attrs}>`;
