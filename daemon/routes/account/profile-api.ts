/**
 * The account page's profile as JSON, in the family of /api/account/devices (docs/directory.md,
 * "The account page"): the same service and rules as the forms (profile.ts). Authenticated by
 * the session cookie; the state-changing requests also refuse a cross-origin request (Origin
 * present and not the issuer's origin), as the devices DELETE does.
 *
 * - PATCH /api/account/profile `{ name }` → the profile;
 * - POST /api/account/email-change `{ email }` → 202: a code is on its way to the new address
 *   (the same answer when another user has it); 403 `step_up_required` for a stale sign-in;
 * - POST /api/account/email-change/confirm `{ email, code }` → the profile, at the new address.
 */
import { pageLocale } from '../../views/html.js';
import Router from '@koa/router';
import { z } from 'zod';
import { displayName, email } from '../../../shared/schemas/common.js';
import type { AppDeps, AppState } from '../../context.js';
import { refuseCrossOrigin } from '../../csrf.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';

export const AccountProfile = z.object({
  name: z.string(),
  email: z.string(),
  email_verified: z.boolean(),
});

const common = {
  400: { description: 'invalid body', schema: ErrorObject },
  401: { description: 'no valid session cookie', schema: ErrorObject },
};

export function accountProfileApiRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const tags = ['account: profile'];
  const issuerOrigin = new URL(deps.config.issuer).origin;
  const authenticate = sessionAuth(deps);
  const service = deps.accountProfile;
  const view = async (tenantId: string, userId: string) => {
    const p = await service.profile(tenantId, userId);
    return { name: p.name, email: p.email, email_verified: p.verified };
  };

  api.add(
    router,
    {
      method: 'patch',
      path: '/api/account/profile',
      summary: "Change the signed-in user's name",
      tags,
      security: 'cookie',
      errors: 'user',
      authenticate,
      body: z.strictObject({ name: displayName }),
      responses: {
        200: { description: 'the profile', schema: AccountProfile },
        ...common,
        403: { description: 'cross-origin request', schema: ErrorObject },
      },
    },
    async (ctx) => {
      refuseCrossOrigin(ctx.get('Origin'), issuerOrigin);
      const s = ctx.state.session!.session;
      await service.rename(s.tenant_id, s.user_id, ctx.state.guard.body.name, {
        type: 'user',
        id: s.user_id,
        requestId: ctx.state.requestId,
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await view(s.tenant_id, s.user_id);
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/account/email-change',
      summary: 'Send a code to the new address; the address changes when it is confirmed',
      tags,
      security: 'cookie',
      errors: 'user',
      authenticate,
      body: z.strictObject({ email }),
      responses: {
        202: {
          description: 'a code is on its way (the same answer when another user has the address)',
          schema: z.object({ email: z.string(), expires_in: z.int() }),
        },
        ...common,
        403: { description: 'cross-origin request, or step_up_required (stale sign-in)', schema: ErrorObject },
        429: { description: 'slow_down: a budget of the email code is spent', schema: ErrorObject },
      },
    },
    async (ctx) => {
      refuseCrossOrigin(ctx.get('Origin'), issuerOrigin);
      const { session, user } = ctx.state.session!;
      const newEmail = ctx.state.guard.body.email;
      const { expiresIn } = await service.requestEmailChange({
        tenantId: session.tenant_id,
        userId: user.id,
        currentEmail: user.email,
        newEmail,
        ip: ctx.ip,
        authTime: session.auth_time,
        // The app's own screen: its Accept-Language chooses the mails' language.
        locale: pageLocale(ctx),
      });
      ctx.status = 202;
      ctx.body = { email: newEmail, expires_in: expiresIn };
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/account/email-change/confirm',
      summary: 'Confirm the address change with the code sent to the new address',
      tags,
      security: 'cookie',
      errors: 'user',
      authenticate,
      body: z.strictObject({ email, code: z.string().max(16) }),
      responses: {
        200: { description: 'the profile, at the new address', schema: AccountProfile },
        400: { description: 'invalid body; invalid_grant: the code is wrong, expired or used', schema: ErrorObject },
        401: common[401],
        403: { description: 'cross-origin request, or the account is disabled', schema: ErrorObject },
        409: { description: 'email_in_use: another user took the address meanwhile', schema: ErrorObject },
        429: { description: 'slow_down: the address is locked or a check budget is spent', schema: ErrorObject },
      },
    },
    async (ctx) => {
      refuseCrossOrigin(ctx.get('Origin'), issuerOrigin);
      const s = ctx.state.session!.session;
      const { email: newEmail, code } = ctx.state.guard.body;
      await service.confirmEmailChange({
        tenantId: s.tenant_id,
        userId: s.user_id,
        newEmail,
        code: code.trim(),
        ip: ctx.ip,
        actor: { type: 'user', id: s.user_id, requestId: ctx.state.requestId },
        locale: pageLocale(ctx),
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await view(s.tenant_id, s.user_id);
    },
  );

  return router;
}
