/**
 * Classifies IP addresses for outbound requests (SSRF defence). An address is acceptable only
 * when it is ordinary global unicast: everything in the IANA special-purpose registries
 * (RFC 6890 and its updates) that is not globally reachable, plus multicast, reserved space
 * and every IPv6 form that embeds or translates to an IPv4 address (mapped, compatible, NAT64,
 * 6to4, Teredo) is refused, because the embedded address could be anything.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Why an address is refused; `undefined` from {@link classifyAddress} means "public". */
export type AddressClass =
  | 'unspecified'
  | 'this-network'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'ietf-protocol'
  | 'documentation'
  | 'benchmarking'
  | 'multicast'
  | 'reserved'
  | 'broadcast'
  | '6to4-relay'
  | 'ipv4-mapped'
  | 'ipv4-compatible'
  | 'nat64'
  | 'discard-only'
  | '6to4'
  | 'teredo'
  | 'unique-local'
  | 'site-local'
  | 'srv6'
  | 'scoped'
  | 'invalid';

type V4Range = [base: number, prefix: number, cls: AddressClass];

const v4 = (a: string): number => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);

/** IPv4 special-purpose ranges (RFC 6890, RFC 5735, IANA ipv4-special-registry), most specific first. */
const V4_RANGES: V4Range[] = [
  ['255.255.255.255', 32, 'broadcast'],
  ['0.0.0.0', 32, 'unspecified'],
  ['0.0.0.0', 8, 'this-network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'cgnat'], // RFC 6598 shared address space
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // also cloud metadata services (169.254.169.254)
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'ietf-protocol'],
  ['192.0.2.0', 24, 'documentation'], // TEST-NET-1
  ['192.88.99.0', 24, '6to4-relay'], // RFC 7526, deprecated anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'], // RFC 2544
  ['198.51.100.0', 24, 'documentation'], // TEST-NET-2
  ['203.0.113.0', 24, 'documentation'], // TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
].map(([a, p, c]) => [v4(a as string), p as number, c as AddressClass]);

function classifyV4(n: number): AddressClass | undefined {
  for (const [base, prefix, cls] of V4_RANGES) {
    const size = 2 ** (32 - prefix);
    if (n >= base && n < base + size) return cls;
  }
  return undefined;
}

/** Parses a textual IPv6 address (with `::` and a trailing dotted quad) into eight 16-bit groups. */
function parseV6(s: string): number[] | undefined {
  let text = s;
  let tail: number[] = [];
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    if (!isIPv4(dotted[1])) return undefined;
    const n = v4(dotted[1]);
    tail = [Math.floor(n / 65536), n % 65536];
    text = text.slice(0, dotted.index + 1) + '0:0'; // placeholder groups, replaced below
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const part = (h: string) =>
    h === '' ? [] : h.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN));
  const head = part(halves[0]);
  const rest = halves.length === 2 ? part(halves[1]) : [];
  if ([...head, ...rest].some(Number.isNaN)) return undefined;
  const fill = 8 - head.length - rest.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...rest];
  if (tail.length) groups.splice(6, 2, ...tail);
  return groups.length === 8 ? groups : undefined;
}

function classifyV6(g: number[]): AddressClass | undefined {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback';
  if (zeroUpTo(5) && g[5] === 0xffff) return 'ipv4-mapped'; // ::ffff:0:0/96
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return 'ipv4-mapped'; // ::ffff:0:0:0/96 (SIIT translated)
  if (zeroUpTo(6)) return 'ipv4-compatible'; // ::/96, deprecated (RFC 4291 §2.5.5.1)
  if (g[0] === 0x64 && g[1] === 0xff9b && (g[2] === 0 || g[2] === 1)) return 'nat64'; // 64:ff9b::/96, 64:ff9b:1::/48
  if (g[0] === 0x100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return 'discard-only'; // 100::/64
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'documentation'; // 2001:db8::/32
  // 2001::/23 (Teredo is 2001::/32)
  if (g[0] === 0x2001 && g[1] < 0x200) return g[1] === 0 ? 'teredo' : 'ietf-protocol';
  if (g[0] === 0x2002) return '6to4'; // 2002::/16
  if (g[0] === 0x3fff && g[1] < 0x1000) return 'documentation'; // 3fff::/20 (RFC 9637)
  if (g[0] === 0x5f00) return 'srv6'; // 5f00::/16 (RFC 9602)
  if ((g[0] & 0xfe00) === 0xfc00) return 'unique-local'; // fc00::/7
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g[0] & 0xffc0) === 0xfec0) return 'site-local'; // fec0::/10, deprecated
  if ((g[0] & 0xff00) === 0xff00) return 'multicast'; // ff00::/8
  // Only 2000::/3 is allocated as global unicast (RFC 4291 §2.4); the rest is reserved.
  if ((g[0] & 0xe000) !== 0x2000) return 'reserved';
  return undefined;
}

/**
 * Returns why `address` (IPv4 or IPv6 text, brackets allowed) must not be contacted, or
 * `undefined` for an ordinary public address. Anything that does not parse is `invalid`.
 */
export function classifyAddress(address: string): AddressClass | undefined {
  let a = address.trim();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  if (a.includes('%')) return 'scoped'; // fe80::1%eth0: a zone id means an interface-local address
  if (isIPv4(a)) return classifyV4(v4(a));
  if (!isIPv6(a)) return 'invalid';
  const g = parseV6(a);
  return g ? classifyV6(g) : 'invalid';
}

/** True for 127.0.0.0/8 and ::1, the only addresses the loopback exception admits. */
export function isLoopback(address: string): boolean {
  return classifyAddress(address) === 'loopback';
}

/** True when `host` (a URL hostname) is an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isIPv4(h) || isIPv6(h);
}
