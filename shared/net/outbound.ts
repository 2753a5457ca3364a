/**
 * The one outbound HTTP client (docs/architecture.md, "Outbound HTTP"). Every request the
 * service makes to a URL that tenants, operators or remote parties name (issuer metadata, key
 * sets, upstream providers, webhooks, federation metadata, token refresh) goes through
 * `exchange` below, the only `https.request` in daemon/, shared/ and cli/ (the architecture
 * test refuses any other, and any `fetch` but the CLI's own, `operatorApiFetch`). An attacker
 * who can name a URL must not be able to make the service call its own network (SSRF), so
 * every request is:
 * - https only, no credentials in the URL, no fragment; an IP literal host must be admitted;
 * - checked at connect time: a custom `lookup` resolves the host and refuses the request when
 *   ANY resolved address is special (private, loopback, link-local, CGNAT, multicast, …), and
 *   the socket's actual peer address is checked again once connected, so a DNS answer that
 *   changes between a check and the connection (DNS rebinding) gains nothing;
 * - never redirected: a 3xx is handed to the caller as it is, and each caller refuses it;
 * - bounded: connect timeout, total timeout (optionally an idle timeout), response size cap.
 * Loopback is admitted only when the operator allows it (IAM_OUTBOUND_ALLOW_LOOPBACK, tests),
 * and extra CA certificates only from the operator (IAM_OUTBOUND_CA_FILE).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { rootCertificates, type TLSSocket } from 'node:tls';
import type { Config } from '../config.js';
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
  /** No byte received for this long (waiting for the head, or between chunks) ends the exchange. */
  idleTimeoutMs?: number;
}

export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = {
  allowLoopback: false,
  connectTimeoutMs: 3_000,
  totalTimeoutMs: 5_000,
  maxBytes: 256 * 1024,
};

/** The operator's outbound settings (IAM_OUTBOUND_ALLOW_LOOPBACK, IAM_OUTBOUND_CA_FILE) on the defaults. */
export function outboundPolicyFromConfig(
  config: Pick<Config, 'outboundAllowLoopback' | 'outboundCaPem'>,
  base: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
): OutboundPolicy {
  return { ...base, allowLoopback: config.outboundAllowLoopback, extraCaPem: config.outboundCaPem };
}

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

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/** The head of an answer, and its body as chunks counted against `maxBytes`. */
export interface OutboundReply {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body; throws OutboundError('too_large') at once when the declared length is over the cap. */
  chunks(): AsyncIterable<Buffer>;
}

/**
 * One HTTPS exchange with `url` under every limit of `policy`; the answer is handed to
 * `consume`, which runs within the total deadline (the deadline passing while it waits rejects
 * at once and tears the connection down). Any status is handed over, a 3xx included: no
 * redirect is followed, the caller decides what it accepts. Throws OutboundError on any
 * refusal or failure. The only outbound request of daemon/, shared/ and cli/.
 */
export function exchange<T>(
  url: string,
  init: OutboundRequest,
  policy: OutboundPolicy,
  consume: (reply: OutboundReply) => Promise<T>,
): Promise<T> {
  let u: URL;
  try {
    u = checkOutboundUrl(url, policy);
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
  const body = init.body === undefined ? undefined : Buffer.isBuffer(init.body) ? init.body : Buffer.from(init.body);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      clearTimeout(idle);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const req = request({
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
      // Node's default, said out loud: verify the certificate chain and the host name.
      rejectUnauthorized: true,
    });
    const total = setTimeout(
      () => finish(new OutboundError('timeout', `no complete answer within ${policy.totalTimeoutMs} ms`)),
      policy.totalTimeoutMs,
    );
    const connect = setTimeout(
      () => finish(new OutboundError('timeout', `could not connect within ${policy.connectTimeoutMs} ms`)),
      policy.connectTimeoutMs,
    );
    let idle: NodeJS.Timeout | undefined;
    const touch = () => {
      if (policy.idleTimeoutMs === undefined) return;
      clearTimeout(idle);
      idle = setTimeout(
        () => finish(new OutboundError('timeout', `no data for ${policy.idleTimeoutMs} ms`)),
        policy.idleTimeoutMs,
      );
    };
    req.on('socket', (socket: Socket) => {
      // The address actually connected, whatever path led to it (IP literal, lookup, cache).
      const check = () => {
        const peer = socket.remoteAddress;
        const cls = peer === undefined ? 'invalid' : refusedAddress(peer, policy);
        if (cls) finish(new OutboundError('blocked_address', `connected peer ${peer ?? '(unknown)'} is ${cls}`));
      };
      if (!socket.connecting && socket.remoteAddress) check();
      else socket.once('connect', check);
      (socket as TLSSocket).once('secureConnect', () => {
        clearTimeout(connect);
        touch();
      });
    });
    req.on('error', (e) => finish(failure(e, u, 'request')));
    req.on('response', (res) => {
      touch();
      const declared = Number(res.headers['content-length'] ?? NaN);
      async function* counted(): AsyncIterable<Buffer> {
        let size = 0;
        // Iterating pauses the socket while the consumer is busy (backpressure), never buffers.
        for await (const c of res as AsyncIterable<Buffer>) {
          touch();
          size += c.length;
          if (size > policy.maxBytes) throw tooLarge(policy);
          yield c;
        }
      }
      const reply: OutboundReply = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        chunks: () => {
          if (declared > policy.maxBytes) throw tooLarge(policy);
          return counted();
        },
      };
      consume(reply).then(
        (v) => {
          // A body the consumer did not read (e.g. a 304) is dropped with the connection.
          res.resume();
          finish(undefined, v);
        },
        (e: unknown) => finish(failure(e, u, 'response')),
      );
    });
    req.end(body);
  });
}

const tooLarge = (policy: OutboundPolicy) =>
  new OutboundError('too_large', `response larger than ${policy.maxBytes} bytes`);

/** Any failure of an exchange as the OutboundError an operator reads. */
function failure(e: unknown, u: URL, stage: 'request' | 'response'): OutboundError {
  if (e instanceof OutboundError) return e;
  const err = e instanceof Error ? e : new Error(String(e));
  if (stage === 'response') return new OutboundError('network', `response failed: ${err.message}`);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new OutboundError('dns', `${u.hostname} could not be resolved`);
  return new OutboundError('network', `request failed: ${code ?? err.message}`);
}

/** A completed outbound exchange: status, headers and the whole (bounded) body. */
export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** `exchange` with the body read whole (up to `maxBytes`). */
export function outboundRequest(
  url: string,
  init: OutboundRequest = {},
  policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
): Promise<OutboundResponse> {
  return exchange(url, init, policy, async (reply) => {
    const chunks: Buffer[] = [];
    for await (const c of reply.chunks()) chunks.push(c);
    return { status: reply.status, headers: reply.headers, body: Buffer.concat(chunks) };
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

/**
 * The CLI's calls to the operator's own daemon (the admin API at the URL `iam login` saved,
 * often http on loopback): Node's fetch, deliberately without the SSRF guard, because that URL
 * is the operator's and no tenant or remote party can name it. Here so that every outbound call
 * of the tree is in this module; nothing but cli/http/ may use it.
 */
export function operatorApiFetch(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, init);
}
