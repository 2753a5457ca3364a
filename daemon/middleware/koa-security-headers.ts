/**
 * Defaults for every response; pages that render HTML set their own CSP on top.
 * The API answers JSON only, so nothing may frame, script or embed it. Set by the request
 * frame (koa-frame.ts) before the handler runs.
 */
export function securityHeaderList(opts: { https: boolean }): [string, string][] {
  return [
    ['X-Content-Type-Options', 'nosniff'],
    ['X-Frame-Options', 'DENY'],
    ['Referrer-Policy', 'no-referrer'],
    ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
    ['Cross-Origin-Resource-Policy', 'same-origin'],
    ['Cross-Origin-Opener-Policy', 'same-origin'],
    ['Cache-Control', 'no-store'],
    ...(opts.https ? [['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'] as [string, string]] : []),
  ];
}
