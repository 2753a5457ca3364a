/**
 * What the localised pages of the account console and the landing page share (the page's
 * language is html.ts `pageLocale`): a message with HTML
 * placeholders (a `<strong>` address, a link), and dates in the reader's language.
 */
import type { Locale, Translate } from '../../shared/i18n/index.js';
import { esc } from './html.js';

/**
 * The message `key`, escaped, with its `{name}` placeholders replaced by the given HTML (which
 * the caller has escaped): the message's words stay in the catalogue, the markup in the page.
 */
export function fill(tr: Translate, key: string, html: Record<string, string>): string {
  return esc(tr(key)).replace(/\{(\w+)\}/g, (whole, name: string) => html[name] ?? whole);
}

const formats = new Map<Locale, Intl.DateTimeFormat>();

/**
 * A moment as `<time>` in the reader's language. The server does not know the reader's time
 * zone, so the time is UTC and says so (`timeZoneName`); the machine-readable value is ISO 8601.
 */
export function when(locale: Locale, ms: number): string {
  let f = formats.get(locale);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
    formats.set(locale, f);
  }
  const iso = new Date(ms).toISOString();
  return `<time datetime="${esc(iso)}">${esc(f.format(ms))} UTC</time>`;
}
