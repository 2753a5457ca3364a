/**
 * Suspend and resume a tenant from the console (docs/console.md, "Dangerous moves"): the first
 * dangerous move, and the pattern the others follow.
 *
 * - GET /console/tenants/:id/suspend (or resume): the confirmation form, saying what will
 *   happen, with the precondition the admin API takes (the state and updated_at this page saw:
 *   docs/tenant-lifecycle.md) filled in, a reason, and the console's CSRF token.
 * - POST: the console's checks in their order (kit.ts: 404, CSRF, writer, step-up), then
 *   TenantLifecycleService.move, audited with the operator's user id as the actor.
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { consolePage } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { actorOf, consoleKit, field, formOf, operatorOf } from './kit.js';

type Move = 'suspend' | 'resume';

const WHAT: Record<Move, { title: string; happens: string }> = {
  suspend: {
    title: 'Suspend tenant',
    happens:
      'Its users can no longer sign in and its tokens stop being accepted until the tenant is resumed; ' +
      'nothing is deleted.',
  },
  resume: {
    title: 'Resume tenant',
    happens: 'Its users can sign in again and its clients get tokens again.',
  },
};

const CURRENT = '/console/tenants';

export function consoleTenantMoveRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);

  for (const move of ['suspend', 'resume'] as const) {
    const path = `/console/tenants/:tenantId/${move}`;
    const what = WHAT[move];

    api.page(router, { method: 'get', path }, async (ctx) => {
      const op = await operatorOf(deps, ctx);
      if (!op) return;
      const t = await kit.tenantOf(ctx, op);
      if (!t) return;
      const back = `/console/tenants/${encodeURIComponent(t.id)}`;
      consolePage(ctx, {
        title: what.title,
        current: CURRENT,
        user: op.user,
        body: `<p>${esc(what.title)} <strong>${esc(t.name)}</strong> (<code>${esc(t.id)}</code>, now
${esc(t.lifecycle_state)}). ${esc(what.happens)}</p>
<form method="post" action="${esc(back)}/${move}">
${kit.csrfField(op)}
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
      const op = await operatorOf(deps, ctx);
      if (!op) return;
      const t = await kit.tenantOf(ctx, op);
      if (!t) return;
      if (!(await kit.guard(ctx, op, t.id, { dangerous: true, current: CURRENT }))) return;
      const b = formOf(ctx);
      const req = {
        expected_state: field(b, 'expected_state'),
        expected_updated_at: Number(b.expected_updated_at),
        reason: field(b, 'reason'),
      };
      if (!req.reason || !Number.isSafeInteger(req.expected_updated_at))
        return kit.refuse(ctx, op, 400, what.title, 'A reason is needed. Go back and give one.', CURRENT);
      try {
        await deps.tenantLifecycle.move(t.id, move, req, actorOf(op));
      } catch (e) {
        // A stale precondition or a move that does not apply: the service's own sentence.
        return kit.failed(ctx, op, e, what.title, CURRENT);
      }
      ctx.status = 303; // RFC 9110 §15.4.4
      ctx.redirect(`/console/tenants/${encodeURIComponent(t.id)}`);
    });
  }
  return router;
}
