/**
 * The operator's side of dynamic client registration (docs/registration.md): a tenant's
 * registration policy (the settings-section routes, ETag and If-Match), its initial access
 * tokens (create: the value shown once; list without values; delete), and the platform's
 * default registration tenant (platform admins only).
 */
import type Router from '@koa/router';
import { z } from 'zod';
import {
  CreatedInitialAccessToken,
  InitialAccessTokenInput,
  InitialAccessTokenView,
  PlatformRegistrationInput,
  PlatformRegistrationView,
  RegistrationPolicyInput,
  RegistrationPolicyView,
} from '../../../shared/schemas/registration.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES, SCOPE_PLATFORM } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';
import { settingsSectionRoutes } from './settings-section.js';

const TenantParam = z.strictObject({ tenantId });
const TokenParam = z.strictObject({ tenantId, tokenId: z.string().min(1).max(40) });
const noTenant = { 404: { description: 'no such tenant', schema: ErrorObject } };

export function registrationAdminRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const policy = settingsSectionRoutes(deps, api, {
    path: '/api/admin/tenants/:tenantId/registration-policy',
    tag: 'admin: registration',
    service: (d) => d.registration.policy,
    input: RegistrationPolicyInput,
    view: RegistrationPolicyView,
    what: 'registration policy',
    summaries: {
      get: "The tenant's dynamic client registration policy; the ETag is what If-Match on PUT compares",
      put:
        "Replace the tenant's registration policy (mode closed, initial_access_token or open; scope ceiling; open " +
        'limits; unused-client and secret lifetimes; trusted software statement issuers); optional If-Match',
    },
    invalid: 'invalid policy; the message names the field',
  });

  const router = policy;
  const tags = ['admin: registration'];
  const tenantAdmin = {
    tags,
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: bearer(deps, ADMIN_SCOPES),
    scopes: ADMIN_SCOPES,
  };
  const tokensPath = '/api/admin/tenants/:tenantId/registration/initial-access-tokens';

  api.add(
    router,
    {
      ...tenantAdmin,
      method: 'post',
      path: tokensPath,
      summary: 'Issue an initial access token (RFC 7591 §3): shown once, stored as its SHA-256',
      params: TenantParam,
      body: InitialAccessTokenInput,
      responses: {
        201: { description: 'the token, with its value', schema: CreatedInitialAccessToken },
        400: { description: 'invalid input (maxUses 1..1000, expiresInSeconds 60..2592000)', schema: ErrorObject },
        ...bearerErrors('tenant'),
        ...noTenant,
      },
    },
    async (ctx) => {
      ctx.status = 201;
      ctx.body = await deps.registration.tokens.create(
        ctx.state.guard.params.tenantId,
        ctx.state.guard.body,
        actorOf(ctx),
        'body',
      );
    },
  );
  api.add(
    router,
    {
      ...tenantAdmin,
      method: 'get',
      path: tokensPath,
      summary: "The tenant's initial access tokens, uses and expiry (never their values)",
      params: TenantParam,
      responses: {
        200: { description: 'the tokens', schema: z.object({ tokens: z.array(InitialAccessTokenView) }) },
        ...bearerErrors('tenant'),
        ...noTenant,
      },
    },
    async (ctx) => {
      ctx.body = { tokens: await deps.registration.tokens.list(ctx.state.guard.params.tenantId) };
    },
  );
  api.add(
    router,
    {
      ...tenantAdmin,
      method: 'delete',
      path: `${tokensPath}/:tokenId`,
      summary: 'Revoke an initial access token (the clients it admitted stay)',
      params: TokenParam,
      responses: {
        204: { description: 'revoked' },
        ...bearerErrors('tenant'),
        404: { description: 'no such tenant or token', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, tokenId } = ctx.state.guard.params;
      await deps.registration.tokens.revoke(tid, tokenId, actorOf(ctx));
      ctx.status = 204;
    },
  );

  const platform = {
    path: '/api/admin/platform/registration',
    tags,
    security: 'bearer' as const,
    tenant: 'platform' as const,
    authenticate: bearer(deps, [SCOPE_PLATFORM]),
    scopes: [SCOPE_PLATFORM],
  };
  api.add(
    router,
    {
      ...platform,
      method: 'get',
      summary: 'The default registration tenant: where a registration that names no tenant lands',
      responses: { 200: { description: 'the setting', schema: PlatformRegistrationView }, ...bearerErrors('platform') },
    },
    async (ctx) => {
      ctx.body = await deps.registration.tokens.defaultTenant();
    },
  );
  api.add(
    router,
    {
      ...platform,
      method: 'put',
      summary: 'Set (or clear, with null) the default registration tenant',
      body: PlatformRegistrationInput,
      responses: {
        200: { description: 'the setting as stored', schema: PlatformRegistrationView },
        400: { description: 'invalid tenant id', schema: ErrorObject },
        ...bearerErrors('platform'),
        ...noTenant,
      },
    },
    async (ctx) => {
      ctx.body = await deps.registration.tokens.setDefaultTenant(ctx.state.guard.body, actorOf(ctx), 'body');
    },
  );
  return router;
}
