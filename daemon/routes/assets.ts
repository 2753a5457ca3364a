/**
 * GET /assets/<name>: the pages' static scripts (daemon/views/assets.ts), from memory. Asked
 * for by the URL a page names (with `?v=<content hash>`), an asset may be cached for a year
 * and never revalidated (RFC 8246 `immutable`): another version has another URL. Asked for
 * without it (or with an old hash), the browser must revalidate, by the strong ETag
 * (RFC 9110 §8.8.3), answered 304 when it still matches (§13.1.2).
 */
import type { ApiRegistry } from '../openapi.js';
import Router from '@koa/router';
import type { AppState } from '../context.js';
import { ASSETS } from '../views/assets.js';

export function assetRoutes(api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  for (const a of ASSETS) {
    const etag = `"${a.hash}"`;
    api.page(router, { method: 'get', path: a.path }, (ctx) => {
      ctx.set('ETag', etag);
      ctx.set(
        'Cache-Control',
        ctx.query.v === a.hash ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate',
      );
      ctx.type = a.contentType;
      const inm = ctx.get('If-None-Match');
      if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
        ctx.status = 304;
        return;
      }
      ctx.body = a.body;
    });
  }
  return router;
}
