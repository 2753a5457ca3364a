/**
 * An SSRF-safe form POST for OAuth token endpoints named by operators (RFC 6749 §3.2): the
 * same guards as safe-fetch.ts (https only, every resolved and connected address checked, no
 * redirects, timeouts, size limit), but the status and the JSON body of any answer are handed
 * back, because a token endpoint's 400 carries the error code (RFC 6749 §5.2) and its 429 or
 * 5xx decides a retry.
 */
import { request, type RequestOptions } from 'node:https';
import type { Socket } from 'node:net';
import { rootCertificates, type TLSSocket } from 'node:tls';
import { checkOutboundUrl, guardedLookup, OutboundError, refusedAddress, type OutboundPolicy } from './safe-fetch.js';

export interface FormAnswer {
  status: number;
  /** The JSON object of the body, or undefined when the body was not a JSON object. */
  json: Record<string, unknown> | undefined;
}

/** POSTs `form` (application/x-www-form-urlencoded) to `url`; throws OutboundError when no answer came. */
export function postForm(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string>,
  policy: OutboundPolicy,
): Promise<FormAnswer> {
  let u: URL;
  try {
    u = checkOutboundUrl(url, policy);
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
  const body = Buffer.from(new URLSearchParams(form).toString());
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: FormAnswer) => {
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
      method: 'POST',
      protocol: 'https:',
      hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
      port: u.port || 443,
      path: `${u.pathname}${u.search}`,
      headers: {
        accept: 'application/json',
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(body.length),
        'user-agent': 'iam-outbound/1',
        ...headers,
      },
      agent: false,
      lookup: guardedLookup(policy),
      ...(policy.extraCaPem ? { ca: [...rootCertificates, policy.extraCaPem] } : {}),
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
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > policy.maxBytes)
          return finish(new OutboundError('too_large', `response larger than ${policy.maxBytes} bytes`));
        chunks.push(c);
      });
      res.on('error', (e) => finish(new OutboundError('network', `response failed: ${e.message}`)));
      res.on('end', () => {
        let json: Record<string, unknown> | undefined;
        try {
          const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
        } catch {
          json = undefined;
        }
        finish(undefined, { status: res.statusCode ?? 0, json });
      });
    });
    req.end(body);
  });
}
