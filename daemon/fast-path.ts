/**
 * The lean path for POST /introspect: the request is answered by node:http directly, without
 * Koa's context, body parser or router, because resource servers call it on every request
 * they serve. It keeps what the Koa stack gives every response — a request id (echoed), the
 * security headers, the error object, an access-log line, the shutdown drain and the body
 * limit — and runs the same Introspector as the Koa route.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthError } from '../shared/errors.js';
import type { AppDeps } from './context.js';
import { securityHeaderList } from './middleware/koa-security-headers.js';
import type { Introspector } from './routes/oauth/introspect.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function fastIntrospection(deps: AppDeps, introspector: Introspector, isDraining: () => boolean) {
  const base = securityHeaderList({ https: deps.config.issuer.startsWith('https:') });
  const limit = deps.config.bodyLimitBytes;
  const log = deps.logger;

  // A flat [name, value, …] array: writeHead takes it as is, with no per-request object.
  const flat = base.flat();
  const send = (
    _req: IncomingMessage,
    res: ServerResponse,
    id: string,
    started: bigint,
    status: number,
    body: string,
    extra: Record<string, string> = {},
  ) => {
    const headers = [
      ...flat,
      'X-Request-Id',
      id,
      'Content-Type',
      'application/json; charset=utf-8',
      'Content-Length',
      String(Buffer.byteLength(body)),
    ];
    if (isDraining()) headers.push('Connection', 'close');
    for (const k in extra) headers.push(k, extra[k]);
    res.writeHead(status, headers);
    res.end(body);
    if (log.isLevelEnabled('info')) {
      log.info(
        {
          reqId: id,
          method: 'POST',
          path: '/introspect',
          status,
          ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        },
        'request',
      );
    }
  };

  const errorBody = (e: OAuthError) => JSON.stringify({ error: e.error, error_description: e.message });

  /** Returns true when it took the request. */
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'POST' || (req.url !== '/introspect' && !req.url?.startsWith('/introspect?'))) return false;
    const started = process.hrtime.bigint();
    const inbound = req.headers['x-request-id'];
    const id = typeof inbound === 'string' && SAFE_ID.test(inbound) ? inbound : randomUUID();
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      send(
        req,
        res,
        id,
        started,
        413,
        JSON.stringify({
          error: 'request_too_large',
          error_description: 'The request body is larger than the service accepts.',
          message: 'The request body is larger than the service accepts.',
        }),
        { Connection: 'close' },
      );
      req.resume();
      return true;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let aborted = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit && !aborted) {
        aborted = true;
        send(
          req,
          res,
          id,
          started,
          413,
          JSON.stringify({
            error: 'request_too_large',
            error_description: 'The request body is larger than the service accepts.',
          }),
          { Connection: 'close' },
        );
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (aborted) return;
      const isForm = /^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '');
      let token: unknown;
      if (isForm) {
        const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
        const params = new URLSearchParams(raw.toString('utf8'));
        const all = params.getAll('token');
        token = all.length === 1 ? all[0] : undefined; // RFC 6749 §3.2: no repeated parameters
      }
      introspector.introspect(req.headers.authorization ?? '', isForm, token).then(
        (body) => send(req, res, id, started, 200, body),
        (e: unknown) => {
          if (e instanceof OAuthError) {
            send(req, res, id, started, e.status, errorBody(e), e.headers);
            return;
          }
          const errorId = randomUUID();
          log.error({ err: e, error_id: errorId, reqId: id }, 'unhandled error');
          send(
            req,
            res,
            id,
            started,
            500,
            JSON.stringify({
              error: 'server_error',
              error_description: 'An unexpected error occurred.',
              message: 'An unexpected error occurred.',
              error_id: errorId,
            }),
          );
        },
      );
    });
    req.on('error', () => {
      aborted = true;
    });
    return true;
  };
}
