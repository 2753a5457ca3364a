/**
 * Outbound HTTPS for URLs that tenants or remote parties control (issuer metadata, key sets).
 * An attacker who can name a URL must not be able to make the service call its own network
 * (SSRF), so every request here is:
 * - https only, no credentials in the URL, no redirects followed, only 200 accepted;
 * - checked at connect time: a custom `lookup` resolves the host and refuses the request when
 *   ANY resolved address is special (private, loopback, link-local, CGNAT, multicast, …), and
 *   the socket's actual peer address is checked again once connected, so a DNS answer that
 *   changes between a check and the connection (DNS rebinding) gains nothing;
 * - bounded: connect timeout, total timeout, response size limit, JSON bodies only.
 * Loopback is refused too unless the operator allows it (IAM_OUTBOUND_ALLOW_LOOPBACK, tests).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingMessage } from 'node:http';
import { request, type RequestOptions } from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { rootCertificates, type TLSSocket } from 'node:tls';
import { classifyAddress, isIpLiteral, type AddressClass } from './address.js';

export interface OutboundPolicy {
  /** Admit 127.0.0.0/8 and ::1 (never other special ranges). Off in production. */
  allowLoopback: boolean;
  /** Extra trusted CA certificates (PEM), added to Node's built-in roots. */
  extraCaPem?: string;
  /** Milliseconds to establish TCP + TLS. */
  connectTimeoutMs: number;
  /** Milliseconds for the whole exchange, response body included. */
  totalTimeoutMs: number;
  /** Largest accepted response body, bytes. */
  maxBytes: number;
}

export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = {
  allowLoopback: false,
  connectTimeoutMs: 3_000,
  totalTimeoutMs: 5_000,
  maxBytes: 256 * 1024,
};

/** A refused or failed outbound request. `reason` is safe to show an operator; no body is kept. */
export class OutboundError extends Error {
  constructor(
    readonly reason:
      'url' | 'blocked_address' | 'dns' | 'timeout' | 'status' | 'content_type' | 'too_large' | 'json' | 'network',
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

/** Why `address` may not be contacted under `policy`, or undefined when it may. */
export function refusedAddress(
  address: string,
  policy: Pick<OutboundPolicy, 'allowLoopback'>,
): AddressClass | undefined {
  const cls = classifyAddress(address);
  if (cls === 'loopback' && policy.allowLoopback) return undefined;
  return cls;
}

/**
 * Validates a URL for outbound use: https, no credentials, no fragment; an IP literal host
 * must be an address the policy admits. Returns the parsed URL or throws OutboundError('url').
 */
export function checkOutboundUrl(raw: string, policy: Pick<OutboundPolicy, 'allowLoopback'>): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new OutboundError('url', 'not an absolute URL');
  }
  if (u.protocol !== 'https:') throw new OutboundError('url', 'only https URLs are fetched');
  if (u.username || u.password) throw new OutboundError('url', 'URLs with credentials are not fetched');
  if (u.hash || raw.includes('#')) throw new OutboundError('url', 'URLs with a fragment are not fetched');
  if (isIpLiteral(u.hostname)) {
    const cls = refusedAddress(u.hostname, policy);
    if (cls) throw new OutboundError('blocked_address', `the address ${u.hostname} is ${cls}`);
  }
  return u;
}

/**
 * dns.lookup wrapper that refuses the connection when any resolved address is special. Node's
 * connect logic calls it with `all: true` (happy eyeballs) or without; both are answered.
 */
export function guardedLookup(policy: Pick<OutboundPolicy, 'allowLoopback'>): LookupFunction {
  return ((
    hostname: string,
    options: { all?: boolean; family?: number | string },
    callback: (...args: unknown[]) => void,
  ) => {
    const family =
      options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (Number(options.family ?? 0) as 0 | 4 | 6);
    dnsLookup(hostname, { all: true, family, verbatim: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      if (!addresses.length)
        return callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }));
      for (const a of addresses) {
        const cls = refusedAddress(a.address, policy);
        // One bad answer taints the name: a resolver mixing public and private answers is the
        // rebinding pattern, and happy eyeballs could connect to either.
        if (cls)
          return callback(
            new OutboundError('blocked_address', `${hostname} resolves to ${a.address}, which is ${cls}`),
          );
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  }) as unknown as LookupFunction;
}

let cachedCa: { extra: string; list: string[] } | undefined;
function caList(extra: string): string[] {
  if (cachedCa?.extra !== extra) cachedCa = { extra, list: [...rootCertificates, extra] };
  return cachedCa.list;
}

type Finish<T> = (err: Error | undefined, value?: T) => void;

/**
 * One outbound HTTPS exchange under every limit of `policy`: the URL checked, every address
 * connected checked (guardedLookup and the connected peer), connect and total timeouts, no
 * redirects, a fresh agent. `onResponse` reads the answer and settles through `finish`.
 */
function exchange<T>(
  url: string,
  policy: OutboundPolicy,
  req: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: Buffer },
  onResponse: (res: IncomingMessage, finish: Finish<T>) => void,
): Promise<T> {
  let u: URL;
  try {
    u = checkOutboundUrl(url, policy);
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish: Finish<T> = (err, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      if (err) {
        r.destroy();
        reject(err);
      } else resolve(value!);
    };
    const opts: RequestOptions = {
      method: req.method,
      protocol: 'https:',
      hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
      port: u.port || 443,
      path: `${u.pathname}${u.search}`,
      headers: {
        'user-agent': 'iam-outbound/1',
        ...req.headers,
        ...(req.body ? { 'content-length': String(req.body.length) } : {}),
      },
      // A fresh agent per request: no pooled socket from an earlier check is ever reused.
      agent: false,
      lookup: guardedLookup(policy),
      ...(policy.extraCaPem ? { ca: caList(policy.extraCaPem) } : {}),
      // Node's default: verify the certificate chain and the host name.
      rejectUnauthorized: true,
    };
    const r = request(opts);
    const total = setTimeout(
      () => finish(new OutboundError('timeout', `no complete answer within ${policy.totalTimeoutMs} ms`)),
      policy.totalTimeoutMs,
    );
    const connect = setTimeout(
      () => finish(new OutboundError('timeout', `could not connect within ${policy.connectTimeoutMs} ms`)),
      policy.connectTimeoutMs,
    );
    r.on('socket', (socket: Socket) => {
      // The address actually connected, whatever path led to it (IP literal, lookup, cache).
      const check = () => {
        const peer = socket.remoteAddress;
        const cls = peer === undefined ? 'invalid' : refusedAddress(peer, policy);
        if (cls) finish(new OutboundError('blocked_address', `connected peer ${peer ?? '(unknown)'} is ${cls}`));
      };
      if (!socket.connecting && socket.remoteAddress) check();
      else socket.once('connect', check);
      (socket as TLSSocket).once('secureConnect', () => clearTimeout(connect));
    });
    r.on('error', (e) => {
      if (e instanceof OutboundError) return finish(e);
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
        return finish(new OutboundError('dns', `${u.hostname} could not be resolved`));
      finish(new OutboundError('network', `request failed: ${code ?? e.message}`));
    });
    r.on('response', (res) => onResponse(res, finish));
    r.end(req.body);
  });
}

/** Reads a response body up to policy.maxBytes. */
function readBody<T>(res: IncomingMessage, policy: OutboundPolicy, finish: Finish<T>, done: (b: Buffer) => void) {
  const declared = Number(res.headers['content-length'] ?? NaN);
  if (declared > policy.maxBytes)
    return finish(new OutboundError('too_large', `response larger than ${policy.maxBytes} bytes`));
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (c: Buffer) => {
    size += c.length;
    if (size > policy.maxBytes)
      return finish(new OutboundError('too_large', `response larger than ${policy.maxBytes} bytes`));
    chunks.push(c);
  });
  res.on('error', (e) => finish(new OutboundError('network', `response failed: ${e.message}`)));
  res.on('end', () => done(Buffer.concat(chunks)));
}

/**
 * GET `url` and parse a JSON object from a 200 response, under every limit of `policy`.
 * Throws OutboundError on any refusal or failure.
 */
export function fetchJson(
  url: string,
  policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
): Promise<Record<string, unknown>> {
  return exchange<Record<string, unknown>>(
    url,
    policy,
    { method: 'GET', headers: { accept: 'application/json' } },
    (res, finish) => {
      // RFC 8414 §3.2 / OIDC Discovery §4.2: a 200 with JSON. Redirects are not followed.
      if (res.statusCode !== 200) {
        res.resume();
        return finish(new OutboundError('status', `answered HTTP ${res.statusCode}`));
      }
      const type = String(res.headers['content-type'] ?? '')
        .split(';')[0]
        .trim()
        .toLowerCase();
      if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
        res.resume();
        return finish(new OutboundError('content_type', `answered ${type || 'no content type'}, not JSON`));
      }
      readBody(res, policy, finish, (buf) => {
        let body: unknown;
        try {
          body = JSON.parse(buf.toString('utf8'));
        } catch {
          return finish(new OutboundError('json', 'the body is not valid JSON'));
        }
        if (!body || typeof body !== 'object' || Array.isArray(body))
          return finish(new OutboundError('json', 'the body is not a JSON object'));
        finish(undefined, body as Record<string, unknown>);
      });
    },
  );
}

/**
 * POST a JSON body to `url` (a webhook), under every limit of `policy`. Resolves with the status
 * when the receiver answered 2xx (RFC 9110 §15.3: the request was accepted); anything else,
 * a redirect included (not followed), throws OutboundError('status'). The answer's body is read
 * (bounded) and dropped.
 */
export function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
): Promise<number> {
  return exchange<number>(
    url,
    policy,
    { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: Buffer.from(body, 'utf8') },
    (res, finish) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        res.resume();
        return finish(new OutboundError('status', `answered HTTP ${status}`));
      }
      readBody(res, policy, finish, () => finish(undefined, status));
    },
  );
}
