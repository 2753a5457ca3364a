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
import type { IncomingHttpHeaders } from 'node:http';
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

/** A completed outbound exchange: status, headers and the whole (bounded) body. */
export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/**
 * One HTTPS exchange with `url` under every limit of `policy`: the URL and every address
 * connected are checked, no redirect is followed (a 3xx is returned as it is), the body is read
 * up to `maxBytes`. Any status is returned; the caller decides what it accepts. Throws
 * OutboundError on any refusal or failure.
 */
export function outboundRequest(
  url: string,
  init: OutboundRequest = {},
  policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
): Promise<OutboundResponse> {
  let u: URL;
  try {
    u = checkOutboundUrl(url, policy);
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
  const body = init.body === undefined ? undefined : Buffer.isBuffer(init.body) ? init.body : Buffer.from(init.body);
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: OutboundResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const opts: RequestOptions = {
      method: init.method ?? 'GET',
      protocol: 'https:',
      hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
      port: u.port || 443,
      path: `${u.pathname}${u.search}`,
      headers: {
        accept: 'application/json',
        'user-agent': 'iam-outbound/1',
        ...init.headers,
        ...(body ? { 'content-length': String(body.length) } : {}),
      },
      // A fresh agent per request: no pooled socket from an earlier check is ever reused.
      agent: false,
      lookup: guardedLookup(policy),
      ...(policy.extraCaPem ? { ca: caList(policy.extraCaPem) } : {}),
      // Node's default: verify the certificate chain and the host name.
      rejectUnauthorized: true,
    };
    const req = request(opts);
    const total = setTimeout(
      () => finish(new OutboundError('timeout', `no complete answer within ${policy.totalTimeoutMs} ms`)),
      policy.totalTimeoutMs,
    );
    const connect = setTimeout(
      () => finish(new OutboundError('timeout', `could not connect within ${policy.connectTimeoutMs} ms`)),
      policy.connectTimeoutMs,
    );
    req.on('socket', (socket: Socket) => {
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
    req.on('error', (e) => {
      if (e instanceof OutboundError) return finish(e);
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
        return finish(new OutboundError('dns', `${u.hostname} could not be resolved`));
      finish(new OutboundError('network', `request failed: ${code ?? e.message}`));
    });
    req.on('response', (res) => {
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
      res.on('end', () =>
        finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.end(body);
  });
}

/**
 * GET `url` and parse a JSON object from a 200 response, under every limit of `policy`.
 * Throws OutboundError on any refusal or failure.
 */
export async function fetchJson(
  url: string,
  policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
): Promise<Record<string, unknown>> {
  const res = await outboundRequest(url, {}, policy);
  // RFC 8414 §3.2 / OIDC Discovery §4.2: a 200 with JSON. Redirects are not followed.
  if (res.status !== 200) throw new OutboundError('status', `answered HTTP ${res.status}`);
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type))
    throw new OutboundError('content_type', `answered ${type || 'no content type'}, not JSON`);
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new OutboundError('json', 'the body is not valid JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new OutboundError('json', 'the body is not a JSON object');
  return body as Record<string, unknown>;
}

/**
 * A Fetch-API-shaped function over `outboundRequest`, for libraries that take a custom fetch
 * (openid-client's `customFetch`): the same SSRF checks and limits for discovery, key sets and
 * token endpoint calls. Request bodies are what such libraries send (form parameters, text,
 * bytes); responses are buffered whole, within `maxBytes`.
 */
export function safeFetch(
  policy: OutboundPolicy,
): (url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown }) => Promise<Response> {
  return async (url, init) => {
    const b = init.body;
    const body =
      b === undefined || b === null
        ? undefined
        : typeof b === 'string'
          ? b
          : b instanceof URLSearchParams
            ? b.toString()
            : b instanceof Uint8Array
              ? Buffer.from(b)
              : b instanceof ArrayBuffer
                ? Buffer.from(b)
                : undefined;
    if (b !== undefined && b !== null && body === undefined)
      throw new OutboundError('url', 'unsupported request body type for an outbound request');
    const res = await outboundRequest(url, { method: init.method, headers: init.headers, body }, policy);
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
    }
    const empty = res.status === 204 || res.status === 205 || res.status === 304 || res.status < 200;
    return new Response(empty ? null : new Uint8Array(res.body), { status: res.status, headers });
  };
}

/**
 * POST a JSON body to `url` (a webhook), under every limit of `policy`. Resolves with the status
 * when the receiver answered 2xx (RFC 9110 §15.3: the request was accepted); anything else,
 * a redirect included (not followed), throws OutboundError('status'). The answer's body is read
 * (bounded) and dropped.
 */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
): Promise<number> {
  const res = await outboundRequest(
    url,
    { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body },
    policy,
  );
  if (res.status < 200 || res.status > 299) throw new OutboundError('status', `answered HTTP ${res.status}`);
  return res.status;
}
