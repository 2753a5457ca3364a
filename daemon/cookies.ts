/**
 * Cookies are written by hand rather than through Koa's cookie jar, which refuses `Secure`
 * behind a TLS-terminating proxy unless proxy trust is configured. Every cookie is HttpOnly.
 */
import type { ParameterizedContext } from 'koa';

export function setCookie(
  ctx: ParameterizedContext,
  name: string,
  value: string,
  o: { maxAgeSeconds: number; secure: boolean; path?: string },
): void {
  const parts = [
    `${name}=${value}`,
    `Path=${o.path ?? '/'}`,
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

export function readCookie(ctx: ParameterizedContext, name: string): string | undefined {
  const header = ctx.get('Cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}
