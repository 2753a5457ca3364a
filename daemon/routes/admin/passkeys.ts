/**
 * A user's passkeys for an operator (docs/passkeys.md, "Operators"): list them, and remove one
 * when the user has lost the device. The tenant is in the path, as for a user's claim values:
 * a tenant admin reaches its own tenant, a platform admin any (the route's tenant binding, route-declarations.ts).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { notFound } from '../../../shared/errors.js';
import { adminPasskeyRecord, AdminPasskeyList } from '../../../shared/schemas/passkeys.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const id = z.string().min(1).max(40);
const UserParams = z.strictObject({ tenantId, id });
const PasskeyParams = z.strictObject({ tenantId, id, passkeyId: id });

const errors = {
  400: { description: 'invalid path parameter; the message names it', schema: ErrorObject },
  ...bearerErrors('tenant'),
};

export function adminPasskeyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const tags = ['admin: passkeys'];
  const userPath = '/api/admin/tenants/:tenantId/users/:id/passkeys';

  api.add(
    router,
    {
      method: 'get',
      path: userPath,
      summary: "A user's passkeys, newest first (public data only)",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: UserParams,
      responses: {
        200: { description: 'the passkeys', schema: AdminPasskeyList },
        ...errors,
        404: { description: 'no such user in the tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, id: userId } = ctx.state.guard.params;
      const list = await deps.passkeys.listForOperator(tid, userId);
      ctx.body = { passkeys: list.map((p) => adminPasskeyRecord(userId, p)) };
    },
  );

  api.add(
    router,
    {
      method: 'delete',
      path: `${userPath}/:passkeyId`,
      summary: "Remove one of a user's passkeys (a lost device); it can no longer sign in",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: PasskeyParams,
      responses: {
        204: { description: 'removed' },
        ...errors,
        404: { description: 'no such passkey of this user (or no such user)', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: tid, id: userId, passkeyId } = ctx.state.guard.params;
      // Another user's passkey is "not found", as on the account page: the id alone reveals nothing.
      if (!(await deps.passkeys.remove(tid, userId, passkeyId, actorOf(ctx))))
        throw notFound(`Passkey ${passkeyId} of user ${userId}`);
      ctx.status = 204;
    },
  );

  return router;
}
