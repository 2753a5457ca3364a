import type { Middleware } from 'koa';

/**
 * Defaults for every response; pages that render HTML set their own CSP on top.
 * The API answers JSON only, so nothing may frame, script or embed it.
 */
export function securityHeaders(opts: { https: boolean }): Middleware {
  const list: [string, string][] = [
    ['X-Content-Type-Options', 'nosniff'],
    ['X-Frame-Options', 'DENY'],
    ['Referrer-Policy', 'no-referrer'],
    ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
    ['Cross-Origin-Resource-Policy', 'same-origin'],
    ['Cross-Origin-Opener-Policy', 'same-origin'],
    ['Cache-Control', 'no-store'],
    ...(opts.https ? [['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'] as [string, string]] : []),
  ];
  return async (ctx, next) => {
    for (const [k, v] of list) ctx.set(k, v);
    await next();
  };
}
