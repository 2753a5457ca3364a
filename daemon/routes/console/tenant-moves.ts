/**
 * Suspend and resume a tenant from the console (docs/console.md, "Dangerous moves"): the first
 * dangerous move, and the pattern the others follow.
 *
 * - GET /console/tenants/:id/suspend (or resume): the confirmation form, saying what will
 *   happen, with the precondition the admin API takes (the state and updated_at this page saw:
 *   docs/tenant-lifecycle.md) filled in, a reason, and the console's CSRF token.
 * - POST: the checks in this order: a tenant the operator may not see, 404 (never 403: another
 *   tenant's id); the CSRF token (bound to the session, daemon/csrf.ts), 403; an auditor, 403;
 *   a sign-in older than five minutes (the account page's STEP_UP_MAX_AGE_MS, NIST SP 800-63B
 *   §4.1.3 re-authentication), 403 with a link to sign in again (`prompt=login`); then
 *   TenantLifecycleService.move, audited with the operator's user id as the actor.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { ApiError } from '../../../shared/errors.js';
import { STEP_UP_MAX_AGE_MS } from '../../../shared/services/auth/passkey-contract.js';
import { mayRead, mayWrite } from '../../../shared/services/console/operators.js';
import type { AppDeps, AppState } from '../../context.js';
import { sessionCsrf } from '../../csrf.js';
import type { ApiRegistry } from '../../openapi.js';
import { consolePage } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { operatorOf, type Operator } from './pages.js';

type Ctx = ParameterizedContext<AppState, { params: Record<string, string> }>;
type Move = 'suspend' | 'resume';

/** The purpose the console's CSRF tokens are derived for (not the account page's). */
export const CONSOLE_CSRF_PURPOSE = 'console-csrf';

const WHAT: Record<Move, { from: string; title: string; happens: string }> = {
  suspend: {
    from: 'active',
    title: 'Suspend tenant',
    happens:
      'Its users can no longer sign in and its tokens stop being accepted until the tenant is resumed; ' +
      'nothing is deleted.',
  },
  resume: {
    from: 'suspended',
    title: 'Resume tenant',
    happens: 'Its users can sign in again and its clients get tokens again.',
  },
};

export function consoleTenantMoveRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const csrf = sessionCsrf(deps.config.secretKey, CONSOLE_CSRF_PURPOSE);

  const refuse = (ctx: Ctx, op: Operator, status: number, title: string, text: string) =>
    consolePage(ctx, {
      status,
      title,
      current: '/console/tenants',
      user: op.user,
      body: `<p role="alert">${text}</p>`,
    });

  /** The tenant, or the 404 page (undefined) for one the operator may not see. */
  const tenantOf = async (ctx: Ctx, op: Operator) => {
    const id = ctx.params.tenantId;
    const t = mayRead(op.access, id) ? await deps.directory.requireTenant(id).catch(() => undefined) : undefined;
    const platform = await deps.operators.platformTenantId();
    if (!t || t.id === platform) {
      refuse(ctx, op, 404, 'Tenant not found', 'No such tenant among those you administer.');
      return undefined;
    }
    return t;
  };

  for (const move of ['suspend', 'resume'] as const) {
    const path = `/console/tenants/:tenantId/${move}`;
    const what = WHAT[move];

    api.page(router, { method: 'get', path }, async (ctx) => {
      const op = await operatorOf(deps, ctx);
      if (!op) return;
      const t = await tenantOf(ctx, op);
      if (!t) return;
      const back = `/console/tenants/${encodeURIComponent(t.id)}`;
      consolePage(ctx, {
        title: what.title,
        current: '/console/tenants',
        user: op.user,
        body: `<p>${esc(what.title)} <strong>${esc(t.name)}</strong> (<code>${esc(t.id)}</code>, now
${esc(t.lifecycle_state)}). ${esc(what.happens)}</p>
<form method="post" action="${esc(back)}/${move}">
<input type="hidden" name="csrf" value="${esc(csrf.tokenFor(op.found.session.id))}">
<input type="hidden" name="expected_state" value="${esc(t.lifecycle_state)}">
<input type="hidden" name="expected_updated_at" value="${t.updated_at}">
<label for="reason">Reason (kept in the audit log)</label>
<input id="reason" name="reason" type="text" required maxlength="1000">
<button type="submit">${esc(what.title)}</button>
</form>
<p><a href="${esc(back)}">Cancel</a></p>`,
      });
    });

    api.page(router, { method: 'post', path, parser: 'form' }, async (ctx) => {
      await deps.throttle.formPost(ctx.ip);
      const op = await operatorOf(deps, ctx);
      if (!op) return;
      const t = await tenantOf(ctx, op);
      if (!t) return;
      const b = (ctx.request.body ?? {}) as Record<string, unknown>;
      if (!csrf.verify(op.found.session.id, b.csrf))
        return refuse(ctx, op, 403, 'Form expired', 'This form has expired: reload the page and try again.');
      if (!mayWrite(op.access, t.id))
        return refuse(ctx, op, 403, 'Read only', 'Your operator role reads; it changes nothing.');
      if (!(Date.now() - op.found.session.auth_time <= STEP_UP_MAX_AGE_MS))
        return refuse(
          ctx,
          op,
          403,
          'Sign in again',
          `This move needs a sign-in within the last ${STEP_UP_MAX_AGE_MS / 60_000} minutes. ` +
            '<a href="/console/sign-in?fresh=1">Sign in again</a>, then repeat it.',
        );
      const req = {
        expected_state: typeof b.expected_state === 'string' ? b.expected_state : '',
        expected_updated_at: Number(b.expected_updated_at),
        reason: typeof b.reason === 'string' ? b.reason.trim() : '',
      };
      if (!req.reason || !Number.isSafeInteger(req.expected_updated_at))
        return refuse(ctx, op, 400, what.title, 'A reason is needed. Go back and give one.');
      try {
        await deps.tenantLifecycle.move(t.id, move, req, { type: 'user', id: op.access.userId });
      } catch (e) {
        // A stale precondition or a move that does not apply: the service's own sentence.
        if (e instanceof ApiError && e.status < 500) return refuse(ctx, op, e.status, what.title, esc(e.message));
        throw e;
      }
      ctx.status = 303; // RFC 9110 §15.4.4
      ctx.redirect(`/console/tenants/${encodeURIComponent(t.id)}`);
    });
  }
  return router;
}
