/**
 * Server-rendered pages: plain HTML forms that work without JavaScript and with the keyboard
 * alone. Every interpolated value goes through `esc`.
 */
import type { ParameterizedContext } from 'koa';
import { randomBase64 } from '../../shared/crypto.js';

export function esc(v: string | number | null | undefined): string {
  return String(v ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0; display: grid; place-items: center; min-height: 100vh; background: Canvas; color: CanvasText; }
  main { width: min(26rem, 92vw); padding: 2rem; border: 1px solid GrayText; border-radius: 12px; }
  h1 { font-size: 1.4rem; margin-top: 0; }
  label { display: block; font-weight: 600; margin: 1rem 0 .35rem; }
  input[type=email], input[type=text] { width: 100%; box-sizing: border-box; font-size: 1.1rem; padding: .6rem;
    border-radius: 6px; border: 1px solid GrayText; }
  input[aria-invalid=true] { border: 2px solid #c62828; }
  button { margin-top: 1.2rem; width: 100%; font-size: 1.05rem; padding: .7rem; border-radius: 6px; border: 0;
    background: #1a56db; color: #fff; cursor: pointer; }
  button.secondary { background: transparent; color: LinkText; border: 1px solid GrayText; }
  :focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
  .error { color: #c62828; font-weight: 600; }
  .hint { color: GrayText; font-size: .95rem; }
  table { width: 100%; border-collapse: collapse; }
  td, th { text-align: left; padding: .4rem; border-bottom: 1px solid GrayText; }
  .skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; }
  [hidden] { display: none !important; }
  ul.passkeys { list-style: none; padding: 0; }
  ul.passkeys > li { border-bottom: 1px solid GrayText; padding: .6rem 0; }
  ul.passkeys form { display: inline; }
  ul.passkeys button, details button { width: auto; margin-top: .5rem; padding: .4rem .8rem; font-size: .95rem; }
`;

/**
 * Renders a full page with its own CSP: a nonce for the one inline stylesheet and, on a page
 * that names `scripts` (same-origin URLs, see daemon/views/assets.ts), for those script
 * elements, which may then call back to this origin (`connect-src 'self'`). A page without
 * scripts allows no script and no fetch at all, and every page works without JavaScript.
 */
export function renderPage(
  ctx: ParameterizedContext,
  p: { title: string; body: string; status?: number; scripts?: readonly string[] },
): void {
  const nonce = randomBase64(16);
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
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(p.title)}</title>
<style nonce="${nonce}">${STYLE}</style>
${scripts.map((src) => `<script src="${esc(src)}" nonce="${esc(nonce)}" defer></script>`).join('\n')}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<main id="main">
${p.body}
</main>
</body>
</html>`;
}

export function errorPage(ctx: ParameterizedContext, status: number, title: string, message: string): void {
  renderPage(ctx, { title, status, body: `<h1>${esc(title)}</h1><p role="alert">${esc(message)}</p>` });
}
