/**
 * Hosted protected resource metadata (RFC 9728; docs/mcp.md): the admin API that stores,
 * shows and removes a resource server's document, and the public route that serves it at
 * `{issuer}/resource-metadata/{client_id}`, the URL an MCP server names in its
 * `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728 §5.1).
 *
 * The RFC 9728 §3.1 well-known location is built from the resource's own host
 * (`https://mcp.example/.well-known/oauth-protected-resource/…`), which this service does not
 * serve, so it is not offered here: a resource server that wants it there proxies or redirects
 * to the hosted URL (docs/mcp.md).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { notFound } from '../../../shared/errors.js';
import { ClientRef } from '../../../shared/schemas/clients.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { ResourceMetadataInput, ResourceMetadataView } from '../../../shared/schemas/resource-metadata.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { RESOURCE_METADATA_PATH } from '../../../shared/services/resource-servers.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, ETAG_HEADER, type ApiRegistry, IF_MATCH_HEADER } from '../../openapi.js';
import { actorOf } from './directory.js';

const ClientParams = z.strictObject({ tenantId, clientId: ClientRef });
const PublicParams = z.strictObject({ clientId: ClientRef });
const path = '/api/admin/tenants/:tenantId/clients/:clientId/resource-metadata';
const e404 = {
  description: 'no such tenant or client (another tenant’s client too), or no document hosted for it',
  schema: ErrorObject,
};
const e412 = { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject };

export function resourceMetadataRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const common = {
    tags: ['admin: directory'],
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: bearer(deps, ADMIN_SCOPES),
    scopes: ADMIN_SCOPES,
    params: ClientParams,
  };
  const errors = {
    400: { description: 'invalid input (the field named in details)', schema: ErrorObject },
    ...bearerErrors('tenant'),
    404: e404,
  };
  const ifMatchOf = (ctx: { get(field: string): string }) => {
    const ifMatch = ctx.get('If-Match');
    return ifMatch ? { ifMatch } : {};
  };

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path,
      summary: "A resource server's hosted protected resource metadata (RFC 9728), with its public URL and ETag",
      responses: {
        200: { description: 'the document', schema: ResourceMetadataView, headers: ETAG_HEADER },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId: tid, clientId } = ctx.state.guard.params;
      const { view, etag } = await deps.resourceServers.get(tid, clientId);
      ctx.set('ETag', etag);
      ctx.body = view;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'put',
      path,
      summary:
        'Store (or replace) the protected resource metadata (RFC 9728 §2) this service hosts for a resource server: ' +
        "`resource` must be one of the client's resource_identifiers; the first store turns strict introspection " +
        'on. Optional If-Match (the ETag from GET): a mismatch is 412',
      body: ResourceMetadataInput,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'the document replaced', schema: ResourceMetadataView, headers: ETAG_HEADER },
        201: { description: 'the document stored', schema: ResourceMetadataView, headers: ETAG_HEADER },
        ...errors,
        412: e412,
      },
    },
    async (ctx) => {
      const { tenantId: tid, clientId } = ctx.state.guard.params;
      const r = await deps.resourceServers.put(tid, clientId, ctx.state.guard.body, actorOf(ctx), {
        where: 'body',
        ...ifMatchOf(ctx),
      });
      ctx.status = r.created ? 201 : 200;
      ctx.set('ETag', r.etag);
      ctx.body = r.view;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'delete',
      path,
      summary:
        'Stop hosting the protected resource metadata of a resource server (strict introspection is left as it is). ' +
        'Optional If-Match: a mismatch is 412',
      headers: [IF_MATCH_HEADER],
      responses: { 204: { description: 'removed' }, ...errors, 412: e412 },
    },
    async (ctx) => {
      const { tenantId: tid, clientId } = ctx.state.guard.params;
      await deps.resourceServers.remove(tid, clientId, actorOf(ctx), ifMatchOf(ctx));
      ctx.status = 204;
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: `${RESOURCE_METADATA_PATH}/:clientId`,
      operationId: 'getProtectedResourceMetadata',
      summary:
        'The protected resource metadata (RFC 9728 §3.2) a resource server has this service host, for its ' +
        'WWW-Authenticate resource_metadata parameter (§5.1); public, CORS open, cacheable',
      tags: ['oauth'],
      security: 'none',
      cors: 'open',
      params: PublicParams,
      responses: {
        200: { description: 'the document (application/json)' },
        400: { description: 'a malformed client_id', schema: ErrorObject },
        404: { description: 'no document hosted under this client_id', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const found = await deps.resourceServers.published(ctx.state.guard.params.clientId);
      if (!found) throw notFound('Protected resource metadata');
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.set('ETag', found.etag);
      ctx.type = 'application/json';
      ctx.body = found.text;
    },
  );

  return router;
}
