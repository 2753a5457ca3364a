/**
 * Server-rendered pages: plain HTML forms that work without JavaScript and with the keyboard
 * alone. Every interpolated value goes through `esc`.
 */
import type { ParameterizedContext } from 'koa';
import { randomBase64 } from '../../shared/crypto.js';
import { DEFAULT_LOCALE, negotiateLocale, t, type Locale } from '../../shared/i18n/index.js';
import { textColourOn } from '../../shared/services/branding-colour.js';
import type { TenantBranding } from '../../shared/services/branding-types.js';
import { STYLE } from './style.js';

export function esc(v: string | number | null | undefined): string {
  return String(v ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/**
 * The origin a tenant's https logo is loaded from, which alone joins the page's `img-src`
 * (docs/branding.md); a same-origin path needs nothing beyond `'self'`.
 */
function logoOrigin(b: TenantBranding | undefined): string | undefined {
  if (!b?.logoUrl || !/^https:/i.test(b.logoUrl) || !URL.canParse(b.logoUrl)) return undefined;
  return new URL(b.logoUrl).origin;
}

/**
 * The tenant's part of the stylesheet: `--brand` and the legible `--brand-text` on it (the
 * primary button takes both), then its own CSS. Both were validated when stored; the check for
 * `</style` is repeated here so that nothing can close the element whatever reached this point.
 */
function brandStyle(b: TenantBranding | undefined): string {
  if (!b) return '';
  const colour = b.primaryColor && /^#[0-9a-fA-F]{6}$/.test(b.primaryColor) ? b.primaryColor : undefined;
  const vars = colour
    ? `\n  :root { --brand: ${colour}; --brand-text: ${textColourOn(colour)}; }` +
      `\n  button:not(.secondary) { background: var(--brand); color: var(--brand-text); }`
    : '';
  const frame =
    '\n  .brand { display: flex; align-items: center; gap: .6rem; margin: 0 0 1rem; font-weight: 600; }' +
    '\n  .brand img { max-height: 40px; max-width: 160px; } .support { margin: 1.5rem 0 0; font-size: .95rem; }';
  const custom = b.customCss && !/<\/style/i.test(b.customCss) ? `\n${b.customCss}` : '';
  return `${vars}${frame}${custom}`;
}

/** The tenant's logo and name above the page's own content. */
function brandHeader(b: TenantBranding | undefined): string {
  if (!b) return '';
  // The name is written beside the logo, so the image is decorative (alt="", WCAG 1.1.1).
  const logo = b.logoUrl ? `<img src="${esc(b.logoUrl)}" alt="" height="40">` : '';
  return `<p class="brand">${logo}<span>${esc(b.displayName)}</span></p>\n`;
}

function supportFooter(b: TenantBranding | undefined, locale: Locale): string {
  if (!b?.supportUrl) return '';
  return `\n<p class="support"><a href="${esc(b.supportUrl)}">${esc(t(locale, 'common.support'))}</a></p>`;
}

/**
 * Renders a full page with its own CSP: a nonce for the one inline stylesheet and, on a page
 * that names `scripts` (same-origin URLs, see daemon/views/assets.ts), for those script
 * elements, which may then call back to this origin (`connect-src 'self'`). A page without
 * scripts allows no script and no fetch at all, and every page works without JavaScript.
 * A tenant's page (`branding`) shows its logo and name at the top and its support link at the
 * bottom, takes its colour and custom CSS, and may load images from its logo's origin only.
 */
export function renderPage(
  ctx: ParameterizedContext,
  p: {
    title: string;
    body: string;
    status?: number;
    scripts?: readonly string[];
    /** The page's language (shared/i18n): `<html lang>` and the frame's own words. */
    locale?: Locale;
    /** The tenant's look (docs/branding.md); absent on pages of no tenant. */
    branding?: TenantBranding;
    /** Further https origins images may load from (a third-party client's logo on the consent page). */
    imageOrigins?: string[];
  },
): void {
  const nonce = randomBase64(16);
  const locale = p.locale ?? DEFAULT_LOCALE;
  const scripts = p.scripts ?? [];
  const scriptPolicy = scripts.length ? ` script-src 'nonce-${nonce}'; connect-src 'self';` : '';
  const images = [logoOrigin(p.branding), ...(p.imageOrigins ?? [])].filter((o): o is string => !!o);
  const imgSrc = ["'self'", 'data:', ...new Set(images)].join(' ');
  // RFC 6749 §10.13 clickjacking: no framing, by CSP and by X-Frame-Options for old browsers.
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none';${scriptPolicy} style-src 'nonce-${nonce}'; img-src ${imgSrc}; ` +
      `base-uri 'none'; frame-ancestors 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.status = p.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(p.title)}</title>
<style nonce="${nonce}">${STYLE}${brandStyle(p.branding)}</style>
${scripts.map((src) => `<script src="${esc(src)}" nonce="${esc(nonce)}" defer></script>`).join('\n')}
</head>
<body>
<a class="skip" href="#main">${esc(t(locale, 'common.skip'))}</a>
<main id="main">
${brandHeader(p.branding)}${p.body}${supportFooter(p.branding, locale)}
</main>
</body>
</html>`;
}

/** What a page is in: its language and, on a tenant's page, the tenant's look. */
export interface PageLook {
  locale: Locale;
  branding?: TenantBranding;
}

/**
 * An error page of the sign-in flow: `errors.<key>.title` over `errors.<key>.message` in the
 * page's language, or over `message` when the caller has a more precise sentence of its own.
 */
export function errorPage(
  ctx: ParameterizedContext,
  status: number,
  key: string,
  look: PageLook,
  message?: string,
): void {
  const title = t(look.locale, `errors.${key}.title`);
  const text = message ?? t(look.locale, `errors.${key}.message`);
  renderPage(ctx, {
    title,
    status,
    locale: look.locale,
    branding: look.branding,
    body: `<h1>${esc(title)}</h1><p role="alert">${esc(text)}</p>`,
  });
}

/**
 * `t(key, vars)` as HTML: the message's text escaped, with `html` placeholders filled by markup
 * the caller built (and escaped) itself, e.g. `{email}` as `<strong>…</strong>`.
 */
export function tHtml(
  locale: Locale,
  key: string,
  html: Record<string, string>,
  vars: Record<string, string | number> = {},
): string {
  const names = Object.keys(html);
  // Markers that neither a message nor `esc` produces (U+E000, private use), replaced after escaping.
  const marked = t(locale, key, { ...vars, ...Object.fromEntries(names.map((n, i) => [n, `\ue000${i}\ue000`])) });
  return esc(marked).replace(/\ue000(\d+)\ue000/g, (_, i: string) => html[names[Number(i)]]);
}

/**
 * The page's language: the authorization request's `ui_locales` (OIDC Core §3.1.2.1) when it
 * names a supported one, else the browser's `Accept-Language`, else English.
 */
export function pageLocale(ctx: ParameterizedContext, uiLocales?: string): Locale {
  return negotiateLocale(uiLocales, ctx.get('Accept-Language'));
}

/**
 * A sentence a service wrote (in English, and often more precise than the catalogue's, e.g. an
 * upstream's refusal): shown as it is on an English page; on a page in another language the
 * caller's catalogue message stands in for it (`undefined` here).
 */
export function serviceSentence(look: PageLook, message: string): string | undefined {
  return look.locale === 'en' ? message : undefined;
}
