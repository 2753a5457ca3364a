/**
 * A client's lifecycle over HTTP (docs/directory.md, "Clients"): read with its ETag, edit,
 * rotate and revoke its secrets, disable, enable, delete. Registration and the list are in
 * directory.ts. The `iam clients …` commands call the same ClientLifecycleService.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { ClientView } from '../../../shared/schemas/admin.js';
import {
  AddClientSecretInput,
  AddedClientSecretView,
  ClientRef,
  ClientSecretId,
  ClientSecretView,
  PatchClientInput,
} from '../../../shared/schemas/clients.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES, SCOPE_PLATFORM } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, ETAG_HEADER, type ApiRegistry, IF_MATCH_HEADER } from '../../openapi.js';
import { actorOf } from './directory.js';

const ClientParams = z.strictObject({ tenantId, clientId: ClientRef });
const SecretParams = z.strictObject({ tenantId, clientId: ClientRef, secretId: ClientSecretId });
const path = '/api/admin/tenants/:tenantId/clients/:clientId';
const e404 = { description: 'no such tenant or client (another tenant’s client too)', schema: ErrorObject };
const errors = {
  400: { description: 'invalid input (the field named in details)', schema: ErrorObject },
  ...bearerErrors('tenant'),
  404: e404,
};

export function clientLifecycleRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const tags = ['admin: directory'];
  const common = {
    tags,
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: auth,
    scopes: ADMIN_SCOPES,
  };
  const lifecycle = () => deps.clientLifecycle;

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path,
      summary: 'A client (never a secret); the ETag header is what If-Match on PATCH compares',
      params: ClientParams,
      responses: { 200: { description: 'the client', schema: ClientView, headers: ETAG_HEADER }, ...errors },
    },
    async (ctx) => {
      const { tenantId: tid, clientId } = ctx.state.guard.params;
      const { client, etag } = await lifecycle().get(tid, clientId);
      // A strong validator (RFC 9110 §8.8.3) of the representation shown.
      ctx.set('ETag', etag);
      ctx.body = client;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'patch',
      path,
      summary:
        "Edit a client's registration, validated as registration is; optional If-Match (a strong ETag " +
        'from GET, or *): a mismatch is 412; the response carries the new ETag',
      params: ClientParams,
      body: PatchClientInput,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'the client as it is now', schema: ClientView, headers: ETAG_HEADER },
        ...errors,
        412: { description: 'If-Match does not match the current ETag (precondition_failed)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, clientId } = ctx.state.guard.params;
      const body = ctx.state.guard.body;
      // As at registration: only a platform admin may grant the platform scope.
      const platform = String(ctx.state.auth?.scope ?? '')
        .split(' ')
        .includes(SCOPE_PLATFORM);
      if (body.scopes?.includes(SCOPE_PLATFORM) && !platform)
        throw new ApiError(403, 'insufficient_scope', `Only a platform admin may grant the ${SCOPE_PLATFORM} scope.`);
      const ifMatch = ctx.get('If-Match');
      const { client, etag } = await lifecycle().update(tid, clientId, body, actorOf(ctx), {
        where: 'body',
        ...(ifMatch ? { ifMatch } : {}),
      });
      ctx.set('ETag', etag);
      ctx.body = client;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'delete',
      path,
      summary: 'Delete a client with its secrets, codes, refresh token families and consents; its tokens stop at once',
      params: ClientParams,
      responses: { 204: { description: 'deleted' }, ...errors },
    },
    async (ctx) => {
      const { tenantId: tid, clientId } = ctx.state.guard.params;
      await lifecycle().delete(tid, clientId, actorOf(ctx));
      ctx.status = 204;
    },
  );

  for (const move of ['disable', 'enable'] as const)
    api.add(
      router,
      {
        ...common,
        method: 'post',
        path: `${path}/${move}`,
        summary:
          move === 'disable'
            ? 'Disable a client: invalid_client everywhere, its tokens, codes and refresh families end at once'
            : 'Enable a disabled client: its credentials work again (tokens revoked by the disable stay revoked)',
        params: ClientParams,
        responses: { 200: { description: 'the client', schema: ClientView }, ...errors },
      },
      async (ctx) => {
        const { tenantId: tid, clientId } = ctx.state.guard.params;
        ctx.body =
          move === 'disable'
            ? await lifecycle().disable(tid, clientId, actorOf(ctx))
            : await lifecycle().enable(tid, clientId, actorOf(ctx));
      },
    );

  api.add(
    router,
    {
      ...common,
      method: 'post',
      path: `${path}/secrets`,
      summary:
        'Add a client secret (shown once); the live ones keep working for old_secret_expires_in seconds ' +
        '(default 86400, at most 30 days)',
      params: ClientParams,
      body: AddClientSecretInput,
      responses: {
        201: { description: 'the new secret, its value shown this once', schema: AddedClientSecretView },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId: tid, clientId } = ctx.state.guard.params;
      ctx.status = 201;
      ctx.body = await lifecycle().addSecret(tid, clientId, ctx.state.guard.body, actorOf(ctx), 'body');
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: `${path}/secrets`,
      summary: "A client's live secrets: ids and times, never a value",
      params: ClientParams,
      responses: {
        200: { description: 'the live secrets', schema: z.object({ secrets: z.array(ClientSecretView) }) },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId: tid, clientId } = ctx.state.guard.params;
      ctx.body = { secrets: await lifecycle().listSecrets(tid, clientId) };
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'delete',
      path: `${path}/secrets/:secretId`,
      summary: 'Revoke one client secret at once',
      params: SecretParams,
      responses: {
        204: { description: 'revoked' },
        ...errors,
        404: { description: 'no such tenant, client or live secret of it', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, clientId, secretId } = ctx.state.guard.params;
      await lifecycle().revokeSecret(tid, clientId, secretId, actorOf(ctx));
      ctx.status = 204;
    },
  );

  return router;
}
