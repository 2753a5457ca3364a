/**
 * Requests from another loopback address. The daemon listens on 127.0.0.1 with proxy trust
 * off, so `ctx.ip` is the socket's peer address; Linux routes all of 127/8 on `lo`, so binding
 * the client socket to 127.0.0.2 (say) makes the daemon see a second client IP.
 */
import { request } from 'node:http';

export interface IpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

/** POSTs `body` (JSON, or a form when `form` is set) to `url` from `localAddress`. */
export function postFrom(
  localAddress: string,
  url: string,
  body: unknown,
  opts: { form?: boolean; headers?: Record<string, string> } = {},
): Promise<IpResponse> {
  const payload = opts.form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body);
  return send(localAddress, url, 'POST', payload, {
    'content-type': opts.form ? 'application/x-www-form-urlencoded' : 'application/json',
    ...opts.headers,
  });
}

/** GETs `url` from `localAddress` (redirects are not followed). */
export function getFrom(localAddress: string, url: string): Promise<IpResponse> {
  return send(localAddress, url, 'GET', undefined, {});
}

function send(
  localAddress: string,
  url: string,
  method: string,
  payload: string | undefined,
  headers: Record<string, string>,
): Promise<IpResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, localAddress, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: <T>() => JSON.parse(text) as T,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
