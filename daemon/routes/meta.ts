import Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps, AppState } from '../context.js';
import type { ApiRegistry } from '../openapi.js';

export function metaRoutes(deps: AppDeps, api: ApiRegistry, version: string): Router<AppState> {
  const router = new Router<AppState>();
  let doc: Record<string, unknown> | undefined;

  api.add(
    router,
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document, generated from the validating schemas',
      tags: ['meta'],
      security: 'none',
      responses: { 200: { description: 'OpenAPI document' } },
    },
    (ctx) => {
      doc ??= api.document(deps.config.issuer, version); // routes are fixed once the app is built
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = doc;
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/jwks',
      summary: 'The public signing keys (RFC 7517), active and retiring',
      tags: ['oauth'],
      security: 'none',
      cors: 'open',
      responses: {
        200: {
          description: 'JWK set',
          schema: z.object({ keys: z.array(z.looseObject({ kid: z.string(), kty: z.string() })) }),
          contentType: 'application/jwk-set+json',
        },
      },
    },
    async (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=60');
      ctx.type = 'application/jwk-set+json';
      ctx.body = await deps.keys.publicJwks();
    },
  );
  return router;
}
