/**
 * The daemon's cookies: HttpOnly, SameSite=Lax, Path=/, and on an https issuer Secure with the
 * `__Host-` prefix (RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain), so that no sibling host
 * and no plain-http response can set or overwrite them. The names callers use are the plain
 * ones (`service_session`, as the interface names it); on an https issuer the browser holds
 * `__Host-service_session`. Decisions: docs/security.md, "Proxies and cookies".
 *
 * Reading goes through Koa's cookie jar (`ctx.cookies`). Writing formats the Set-Cookie line
 * here: the jar's `Secure` depends on Koa's view of the request's scheme, which behind a proxy
 * that is not (or not yet) listed in IAM_TRUSTED_PROXIES is plain http, whereas whether the
 * browser reached the service over https is known from the issuer; and the jar writes
 * `Expires` where the service documents `Max-Age`.
 */
import type Koa from 'koa';
import type { ParameterizedContext } from 'koa';

/** RFC 6265bis §4.1.3.2. */
export const HOST_PREFIX = '__Host-';
const SECURE = Symbol('iam.cookies.secure');

/** RFC 6265 §4.1.1 cookie-name (a token) and cookie-value (cookie-octets). */
const NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;

/**
 * Tells the cookie helpers whether the issuer is https, so a cookie is read under the name it
 * was written with. Called once by buildApp.
 */
export function configureCookies(app: Pick<Koa, 'context'>, o: { secure: boolean }): void {
  (app.context as unknown as Record<symbol, boolean>)[SECURE] = o.secure;
}

/** The name a cookie has in the browser: `__Host-<name>` on an https issuer. */
export function cookieName(name: string, secure: boolean): string {
  return secure ? `${HOST_PREFIX}${name}` : name;
}

export function setCookie(
  ctx: ParameterizedContext,
  name: string,
  value: string,
  o: { maxAgeSeconds: number; secure: boolean; path?: string },
): void {
  if (!NAME.test(name) || !VALUE.test(value)) throw new TypeError(`cookie ${name}: invalid name or value`);
  // A __Host- cookie must have Path=/ (RFC 6265bis §4.1.3.2), so a path applies on http only.
  const path = o.secure ? '/' : (o.path ?? '/');
  const parts = [
    `${cookieName(name, o.secure)}=${value}`,
    `Path=${path}`,
    `Max-Age=${Math.max(0, Math.floor(o.maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(o.secure ? ['Secure'] : []),
  ];
  ctx.append('Set-Cookie', parts.join('; '));
}

export function clearCookie(ctx: ParameterizedContext, name: string, secure: boolean, path = '/'): void {
  setCookie(ctx, name, '', { maxAgeSeconds: 0, secure, path });
}

/**
 * The value of the cookie `name` (the plain name; `__Host-<name>` is read on an https issuer,
 * and only that: an unprefixed one there could have been planted by another host).
 */
export function readCookie(ctx: ParameterizedContext, name: string): string | undefined {
  const secure = (ctx as unknown as Record<symbol, boolean | undefined>)[SECURE] === true;
  return ctx.cookies.get(cookieName(name, secure), { signed: false }) || undefined;
}
