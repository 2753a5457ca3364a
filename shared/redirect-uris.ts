/**
 * Redirect URIs: what may be registered, and how a requested one is matched against the
 * registration. Matching is by exact string (RFC 9700 §4.1.3); the one exception is the port of
 * a public client's loopback redirect URI (RFC 8252 §7.3), which covers `localhost` as well as the
 * IP literals (RFC 8252 §8.3; docs/oauth.md, "Loopback redirect URIs"). Nothing is parsed into a URL on
 * the matching path, since a parser normalises (case, default ports, numeric IPv4 forms,
 * backslashes, trailing dots, surrounding whitespace) and so lets distinct strings compare equal.
 * Decisions: docs/security.md, "Redirect URIs".
 */

/**
 * A loopback redirect URI split at its port: the scheme and host, the port in its canonical
 * decimal form (no leading zero, 1 to 65535, checked by the caller) or none, and the rest of the
 * string, which must start the path or the query. The hosts are the IP literals 127.0.0.1 and
 * [::1] (RFC 8252 §7.3) and the name `localhost`, in lower case only: RFC 8252 §8.3 prefers the
 * literals but does not forbid the name, and the default issuer, http://localhost:<port>, makes
 * it the name a developer's first client uses. The host must be equal on both sides, so a
 * `localhost` registration never matches a 127.0.0.1 request or the reverse.
 */
const LOOPBACK = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))(?::([1-9][0-9]{0,4}))?([/?][\s\S]*)?$/;

function splitLoopback(uri: string): { origin: string; rest: string } | undefined {
  const m = LOOPBACK.exec(uri);
  if (!m || (m[2] !== undefined && Number(m[2]) > 65535)) return undefined;
  return { origin: m[1], rest: m[3] ?? '' };
}

/**
 * Whether `uri`, as the client sent it, is one of `registered`. Exact string comparison; for a
 * public client whose registered URI is `http` on a loopback host (127.0.0.1, [::1], localhost), the
 * port may differ or be absent and the rest must still be equal character for character
 * (RFC 8252 §7.3). Confidential clients get exact matching only.
 */
export function redirectUriMatches(registered: readonly string[], isPublic: boolean, uri: string): boolean {
  if (registered.includes(uri)) return true;
  if (!isPublic) return false;
  const asked = splitLoopback(uri);
  if (!asked) return false;
  return registered.some((r) => {
    const reg = splitLoopback(r);
    return reg !== undefined && reg.origin === asked.origin && reg.rest === asked.rest;
  });
}

/** RFC 3986 §2: the characters a URI may contain (unreserved, reserved and `%`). */
const URI_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const WHITESPACE_OR_CONTROL = /[\x00-\x20\x7f-\x9f\s]/u;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/**
 * Why `uri` may not be registered as a redirect URI, or undefined when it may. Allowed:
 * `https` URIs, `http` on the loopback hosts 127.0.0.1, [::1] (RFC 8252 §7.3) and `localhost`
 * (§8.3 accepts it, preferring the literals), and private-use schemes in reverse-domain form, which contain a period
 * (RFC 8252 §7.1, e.g. `com.example.app:/cb`). Refused: any other scheme, userinfo, wildcards,
 * fragments (RFC 6749 §3.1.2), whitespace and control characters, characters outside RFC 3986,
 * malformed percent-encoding, and a scheme or authority that is not in its canonical form (so
 * that what is stored is what a browser will send back, and exact matching can work).
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (WHITESPACE_OR_CONTROL.test(uri)) return 'must not contain whitespace or control characters';
  if (!URI_CHARS.test(uri)) return 'contains a character a URI may not hold (RFC 3986 §2); percent-encode it';
  if (/%(?![0-9A-Fa-f]{2})/.test(uri)) return 'has invalid percent-encoding (RFC 3986 §2.1)';
  if (uri.includes('#')) return 'must not contain a fragment (RFC 6749 §3.1.2)';
  if (uri.includes('*')) return 'must not contain a wildcard: redirect URIs are matched exactly (RFC 9700 §4.1.3)';
  const scheme = SCHEME.exec(uri)?.[1];
  if (!scheme) return 'must be an absolute URI';
  if (scheme !== scheme.toLowerCase()) return 'must have a lower-case scheme';

  // The authority, as written: from after "//" to the first "/", "?" or the end.
  const auth = /^[a-z][a-z0-9+.-]*:\/\/([^/?]*)/.exec(uri)?.[1];
  if (auth?.includes('@')) return 'must not contain userinfo (user:password@)';

  if (scheme === 'https' || scheme === 'http') {
    if (auth === undefined || auth === '') return `must be ${scheme}://host/...`;
    let u: URL;
    try {
      u = new URL(uri);
    } catch {
      return 'must be an absolute URI';
    }
    // What a browser would make of the authority must be exactly what is written: no upper-case
    // host, default or zero-padded port, numeric or dotted IPv4 variants, or IDN in Unicode.
    if (u.host !== auth) return `must write the host and port in canonical form ("${u.host}")`;
    if (scheme === 'http' && u.hostname !== '127.0.0.1' && u.hostname !== '[::1]' && u.hostname !== 'localhost')
      return 'http is allowed only for loopback hosts 127.0.0.1, [::1] and localhost (RFC 8252 §7.3, §8.3); use https';
    return undefined;
  }
  // RFC 8252 §7.1: a private-use scheme is a reverse domain name, so it contains a period.
  if (!scheme.includes('.'))
    return (
      `the ${scheme}: scheme is not allowed: use https, http on 127.0.0.1, [::1] or localhost, ` +
      'or a reverse-domain private-use scheme such as com.example.app: (RFC 8252 §7.1)'
    );
  if (uri.length === scheme.length + 1) return 'must have a path after the scheme';
  return undefined;
}

/**
 * A web origin as a client may register it for CORS (docs/oauth.md, "CORS"): `scheme://host[:port]`
 * (RFC 6454 §6.1, the serialisation a browser sends in the Origin header), `https`, or `http` on
 * a loopback host (127.0.0.0/8, [::1], localhost: a page a developer serves on their own
 * machine), with no userinfo, path, query or fragment. Returns the origin in the form a browser
 * sends it (lower-case, no default port), or a reason it is refused.
 */
export function parseWebOrigin(value: string): { origin: string } | { problem: string } {
  if (WHITESPACE_OR_CONTROL.test(value)) return { problem: 'must not contain whitespace or control characters' };
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)$/.exec(value);
  if (!m) return { problem: 'must be scheme://host[:port], with no path, query or fragment' };
  if (m[2].includes('@')) return { problem: 'must not contain userinfo (user:password@)' };
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return { problem: 'must be scheme://host[:port]' };
  }
  if (u.protocol === 'https:') return { origin: u.origin };
  if (u.protocol === 'http:') {
    const h = u.hostname;
    if (h === 'localhost' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h)) return { origin: u.origin };
    return { problem: 'http is allowed only for loopback hosts (127.0.0.0/8, [::1], localhost); use https' };
  }
  return { problem: 'must be an https origin (or http on a loopback host)' };
}
