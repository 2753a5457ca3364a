/**
 * Localisation of pages and mails (docs/localisation.md): plain message catalogues, one file per
 * area under `catalogues/`, each holding every supported language; plural forms are chosen by
 * the platform's CLDR rules (`Intl.PluralRules`), so no i18n library is needed.
 *
 * A message is a string with `{name}` placeholders, or a plural object keyed by CLDR category
 * (`one`, `other`, …) chosen by the `count` variable. English is complete by construction (it is
 * the source); test/shared/i18n-catalogues.test.ts fails when another language lacks a key or a
 * placeholder, so a missing translation never reaches a user.
 */
import { CATALOGUES } from './catalogues/index.js';
import { LOCALES, type Catalogue, type Locale } from './types.js';

export { LOCALES, type AreaCatalogue, type Catalogue, type Locale, type Message } from './types.js';
export const DEFAULT_LOCALE: Locale = 'en';

const isLocale = (v: string): v is Locale => (LOCALES as readonly string[]).includes(v);

/** Merged catalogues per locale (built once). */
const MERGED: Record<Locale, Catalogue> = Object.fromEntries(
  LOCALES.map((l) => [l, Object.assign({}, ...Object.values(CATALOGUES).map((area) => area[l]))]),
) as Record<Locale, Catalogue>;

function candidates(tag: string): string[] {
  const lower = tag.trim().toLowerCase();
  if (!lower || lower === '*') return [];
  const primary = lower.split('-')[0];
  return primary === lower ? [lower] : [lower, primary];
}

/**
 * The language of a page or mail: the first supported tag of `ui_locales` (OIDC Core §3.1.2.1, a
 * space-separated list in order of preference), else the best of `Accept-Language` (RFC 9110
 * §12.5.4, by q-value, then order), else English. A region tag falls back to its language
 * (`de-CH` → `de`).
 */
export function negotiateLocale(uiLocales?: string | null, acceptLanguage?: string | null): Locale {
  for (const tag of (uiLocales ?? '').split(' ')) {
    for (const c of candidates(tag)) if (isLocale(c)) return c;
  }
  const ranged = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q === undefined ? 1 : Number(q.slice(2));
      return { tag, weight: Number.isFinite(weight) ? weight : 0, i };
    })
    .filter((r) => r.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.i - b.i);
  for (const r of ranged) for (const c of candidates(r.tag)) if (isLocale(c)) return c;
  return DEFAULT_LOCALE;
}

/**
 * The message `key` in `locale` with `{name}` placeholders filled from `vars` (values are
 * inserted as given: HTML pages escape the result themselves). An unknown key is a programming
 * error and throws, so tests find it.
 */
export function t(locale: Locale, key: string, vars: Record<string, string | number> = {}): string {
  const msg = MERGED[locale][key] ?? MERGED.en[key];
  if (msg === undefined) throw new Error(`no message ${key}`);
  const text =
    typeof msg === 'string' ? msg : (msg[new Intl.PluralRules(locale).select(Number(vars.count ?? 0))] ?? msg.other);
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** A translator bound to one locale, as pages and mails hold it. */
export type Translate = (key: string, vars?: Record<string, string | number>) => string;
export const translator =
  (locale: Locale): Translate =>
  (key, vars) =>
    t(locale, key, vars);

/** Every key per locale, for the completeness test. */
export function catalogueKeys(): Record<Locale, Catalogue> {
  return MERGED;
}
