/**
 * The client's address and scheme behind trusted reverse proxies (IAM_TRUSTED_PROXIES).
 *
 * Koa's own `app.proxy` trusts X-Forwarded-* from every peer or from none, so it stays off and
 * this sets `ctx.request.ip` (and the protocol) per request instead: only when the socket peer is
 * in a trusted range, X-Forwarded-For is walked from the right, skipping trusted hops, to the
 * first address that is not trusted, which is the client (as Express's `trust proxy` with a list
 * of ranges does). Each hop appends the address it received the request from, so every entry
 * left of an untrusted one may have been written by the client and is ignored. When the peer is
 * not trusted the headers are ignored and the peer is the client.
 *
 * Runs on every request, including POST /introspect: one BlockList lookup when the peer is not
 * trusted, and it is not installed at all when no proxy is trusted.
 */
import { BlockList, isIP } from 'node:net';
import type { Middleware } from 'koa';

/** `::ffff:192.0.2.1`, how a dual-stack socket reports an IPv4 peer, as the IPv4 address. */
function plain(addr: string): string {
  return addr.startsWith('::ffff:') && isIP(addr.slice(7)) === 4 ? addr.slice(7) : addr;
}

/**
 * The middleware for `cidrs` (validated `address/prefix` strings, shared/config.ts), or
 * undefined when there are none and the socket peer is always the client.
 */
export function trustedProxies(cidrs: readonly string[]): Middleware | undefined {
  if (cidrs.length === 0) return undefined;
  const list = new BlockList();
  for (const c of cidrs) {
    const [addr, prefix] = c.split('/') as [string, string];
    // Peers are compared in plain form, so IPv4 proxies are written as IPv4 ranges.
    list.addSubnet(addr, Number(prefix), isIP(addr) === 4 ? 'ipv4' : 'ipv6');
  }
  const trusted = (addr: string): boolean => {
    const family = isIP(addr);
    return family !== 0 && list.check(addr, family === 4 ? 'ipv4' : 'ipv6');
  };

  return async (ctx, next) => {
    const peer = plain(ctx.req.socket.remoteAddress ?? '');
    if (!trusted(peer)) {
      await next();
      return;
    }

    let client = peer;
    const forwarded = ctx.get('X-Forwarded-For');
    if (forwarded) {
      const hops = forwarded.split(',');
      for (let i = hops.length - 1; i >= 0; i--) {
        const hop = plain(hops[i].trim());
        // Not an address (garbage, or host:port): the walk stops, and the client is the last
        // hop that a trusted proxy vouched for rather than whatever text came before it.
        if (isIP(hop) === 0) break;
        client = hop;
        if (!trusted(hop)) break;
      }
    }
    ctx.request.ip = client;

    // The scheme the client used with the first proxy: only http or https are believed.
    const proto = ctx.get('X-Forwarded-Proto').split(',')[0].trim().toLowerCase();
    if (proto === 'https' || proto === 'http') {
      Object.defineProperty(ctx.request, 'protocol', { value: proto, configurable: true });
    }
    await next();
  };
}
