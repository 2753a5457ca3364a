/**
 * The body parser of the OAuth form endpoints (/token, /revoke: the routes that declare
 * `parser: 'oauth-form'`, route-declarations.ts), in front of koa-body.
 *
 * Their parameters are a flat application/x-www-form-urlencoded form (RFC 6749 §3.2, RFC 7009
 * §2.1) with no nested names, so a request sending exactly that media type has its body read
 * by co-body (the reader under koa-body: the same limit, Content-Encoding handling and errors,
 * through bodyReadError) and parsed by node:querystring, as /introspect's form is, instead of
 * koa-body's four media-type tests and qs. A repeated parameter is an array either way, which
 * the endpoints refuse where a parameter must appear once. Any other request (another method
 * or media type, a charset parameter) goes to koa-body as before.
 */
import coBody from 'co-body';
import type { Middleware } from 'koa';
import { parse as parseForm } from 'node:querystring';
import type { AppState } from '../context.js';
import { bodyReadError } from './koa-body-errors.js';

const FORM = 'application/x-www-form-urlencoded';

export function oauthFormFirst(general: Middleware<AppState>, limit: number): Middleware<AppState> {
  return async function bodyParser(ctx, next) {
    const h = ctx.req.headers;
    if (
      ctx.method !== 'POST' ||
      h['content-type'] !== FORM ||
      // What type-is (and so koa-body) calls a body: a length, or a chunked one.
      (h['content-length'] === undefined && h['transfer-encoding'] === undefined)
    )
      return general(ctx, next) as Promise<void>;
    let text: string;
    try {
      text = (await coBody.text(ctx, { limit })) as string;
    } catch (e) {
      throw bodyReadError(e);
    }
    // A null-prototype object of strings and string arrays, as koa-body's qs would give for these forms.
    ctx.request.body = parseForm(text) as Record<string, string | string[]>;
    await next();
  };
}
