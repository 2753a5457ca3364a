/**
 * Server-rendered pages: plain HTML forms that work without JavaScript and with the keyboard
 * alone. Every interpolated value goes through `esc`.
 */
import type { ParameterizedContext } from 'koa';
import { randomBase64 } from '../../shared/crypto.js';
import { DEFAULT_LOCALE, t, type Locale } from '../../shared/i18n/index.js';
import type { TenantBranding } from '../../shared/services/branding-types.js';
import { STYLE } from './style.js';

export function esc(v: string | number | null | undefined): string {
  return String(v ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/**
 * Renders a full page with its own CSP: a nonce for the one inline stylesheet and, on a page
 * that names `scripts` (same-origin URLs, see daemon/views/assets.ts), for those script
 * elements, which may then call back to this origin (`connect-src 'self'`). A page without
 * scripts allows no script and no fetch at all, and every page works without JavaScript.
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
  },
): void {
  const nonce = randomBase64(16);
  const locale = p.locale ?? DEFAULT_LOCALE;
  const scripts = p.scripts ?? [];
  const scriptPolicy = scripts.length ? ` script-src 'nonce-${nonce}'; connect-src 'self';` : '';
  // RFC 6749 §10.13 clickjacking: no framing, by CSP and by X-Frame-Options for old browsers.
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none';${scriptPolicy} style-src 'nonce-${nonce}'; img-src 'self' data:; base-uri 'none'; ` +
      `frame-ancestors 'none'`,
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
<style nonce="${nonce}">${STYLE}</style>
${scripts.map((src) => `<script src="${esc(src)}" nonce="${esc(nonce)}" defer></script>`).join('\n')}
</head>
<body>
<a class="skip" href="#main">${esc(t(locale, 'common.skip'))}</a>
<main id="main">
${p.body}
</main>
</body>
</html>`;
}

export function errorPage(ctx: ParameterizedContext, status: number, title: string, message: string): void {
  renderPage(ctx, { title, status, body: `<h1>${esc(title)}</h1><p role="alert">${esc(message)}</p>` });
}
