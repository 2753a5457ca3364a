/**
 * Which values may not serve as a resource identifier (RFC 8707 §2): this authorization
 * server's own issuer identifier, any of its endpoints and anything under the issuer's path.
 *
 * Why: a token with no other target is addressed to the issuer (`aud` = issuer), and a client
 * whose `resource_identifiers` name the issuer would be treated as the audience of every such
 * token of its tenant: a resource server that may introspect them under strict introspection
 * and exchange them as "addressed to it" (RFC 8693 §1.1). The issuer's URL space belongs to
 * the authorization server, never to a client.
 */

/** RFC 3986 §2.3 unreserved characters, which percent-encoding must not disguise (§6.2.2.2). */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

function decodeUnreserved(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (m, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    // An encoded slash is read as one too: refusing `…/t1%2Ftoken` errs on the safe side.
    return UNRESERVED.test(c) || c === '/' ? c : m.toUpperCase();
  });
}

/**
 * Syntax-based normalisation (RFC 3986 §6.2.2) through the WHATWG URL parser: scheme and host
 * lower-cased, the default port dropped, dot segments removed, IPv4 shorthands expanded; then
 * unreserved characters percent-decoded, a host's trailing dot and the path's trailing slashes
 * dropped. Undefined for a value that is not an absolute http(s) URL (an URN, `api://…`): such
 * a value cannot name the issuer's URL space.
 */
function normalise(value: string): { origin: string; path: string } | undefined {
  let u: URL;
  try {
    u = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  const host = u.hostname.replace(/\.$/, '');
  const origin = `${u.protocol}//${host}${u.port ? `:${u.port}` : ''}`;
  // Backslashes are slashes to the parser already; collapse repeated slashes too, which most
  // servers (this one's router included) treat as one.
  const path = decodeUnreserved(u.pathname)
    .replace(/\/{2,}/g, '/')
    .replace(/\/+$/, '');
  return { origin, path };
}

/**
 * True when `value` is the issuer identifier `issuer`, one of its endpoints, or anything under
 * the issuer's path (with any query), compared after normalisation, so `HTTPS://ID.example/`,
 * `https://id.example:443/./token` or `https://id.example/%74oken` count as the issuer's too.
 */
export function isIssuerUrl(value: string, issuer: string): boolean {
  const v = normalise(value);
  const i = normalise(issuer);
  if (!v || !i || v.origin !== i.origin) return false;
  return i.path === '' || v.path === i.path || v.path.startsWith(`${i.path}/`);
}

/** The reason a resource identifier is refused, for the error naming the field. */
export const ISSUER_RESOURCE_MESSAGE =
  "must not be this authorization server's issuer identifier, one of its endpoints or a URL under it";
