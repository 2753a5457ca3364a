/**
 * A user's lifecycle moves for an operator (docs/directory.md, "Users: disable, sign out
 * everywhere, delete (erasure)"): disable, enable, sign out everywhere, erase; and the
 * invitation, a mail with a sign-in link (docs/directory.md, "Users: invite"). The tenant is in
 * the path: a tenant admin reaches its own tenant, a platform admin any; another tenant's user
 * is 404, as an unknown one.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const UserParams = z.strictObject({ tenantId, userId: z.string().min(1).max(40) });

export const UserLifecycleView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  status: z.enum(['active', 'disabled']),
  changed: z.boolean().describe('false when the user was already there (a repeated or concurrent call)'),
  sessions_ended: z.number().int(),
  families_revoked: z.number().int(),
});

export const UserErasureView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  deleted: z.literal(true),
  pseudonym: z.string().describe('the keyed pseudonym recorded in the audit event (docs/directory.md)'),
  erased: z.record(z.string(), z.number().int()).describe('rows deleted (or pseudonymised) per table'),
});

export const InvitationView = z.object({
  user_id: z.string(),
  tenant_id: z.string(),
  mail_id: z.string().describe('the outbox entry of the mail (iam outbox list)'),
  sign_in_url: z.string().describe("the link the mail carries: the account page's sign-in, no secret in it"),
});

const errors = {
  400: { description: 'invalid path parameter; the message names it', schema: ErrorObject },
  ...bearerErrors('tenant'),
  404: { description: "no such user in the tenant (another tenant's user too)", schema: ErrorObject },
};

export function userLifecycleRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const tags = ['admin: directory'];
  const userPath = '/api/admin/tenants/:tenantId/users/:userId';
  const common = {
    tags,
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: auth,
    scopes: ADMIN_SCOPES,
    params: UserParams,
  };

  const moves = [
    ['disable', 'Disable a user: no sign-in by any method, every session and token ended at once (idempotent)'],
    ['enable', 'Enable a disabled user again (status only; ended sessions stay ended; idempotent)'],
    ['sign-out', 'Sign a user out everywhere: every session and refresh token ended, the user stays active'],
  ] as const;
  for (const [move, summary] of moves)
    api.add(
      router,
      {
        method: 'post',
        path: `${userPath}/${move}`,
        summary,
        ...common,
        responses: { 200: { description: "the user's state after the call", schema: UserLifecycleView }, ...errors },
      },
      async (ctx) => {
        const { tenantId: tid, userId } = ctx.state.guard.params;
        const s = deps.userLifecycle;
        const actor = actorOf(ctx);
        ctx.body =
          move === 'disable'
            ? await s.disable(tid, userId, actor)
            : move === 'enable'
              ? await s.enable(tid, userId, actor)
              : await s.signOut(tid, userId, actor);
      },
    );

  api.add(
    router,
    {
      method: 'post',
      path: `${userPath}/invite`,
      summary:
        "Mail a user a sign-in link to the tenant's account page, the address filled in (no secret in it: the " +
        'user still proves the address with an email code); queued in the outbox, so 202',
      ...common,
      responses: {
        202: { description: 'the mail is queued (the outbox delivers it)', schema: InvitationView },
        ...errors,
        409: {
          description: 'the user is disabled (user_disabled), or the tenant is not active (tenant_not_active)',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const { tenantId: tid, userId } = ctx.state.guard.params;
      ctx.body = await deps.invitations.invite(tid, userId, actorOf(ctx), { issuer: deps.config.issuer });
      ctx.status = 202; // RFC 9110 §15.3.3: accepted; the outbox sends the mail after the commit
    },
  );

  api.add(
    router,
    {
      method: 'delete',
      path: userPath,
      summary: 'Erase a user: the profile and every row naming the user, every token revoked, in one transaction',
      ...common,
      responses: { 200: { description: 'erased', schema: UserErasureView }, ...errors },
    },
    async (ctx) => {
      const { tenantId: tid, userId } = ctx.state.guard.params;
      ctx.body = await deps.userLifecycle.erase(tid, userId, actorOf(ctx));
    },
  );

  return router;
}
