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
import { tenantPath } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { actorOf, consoleKit, field, formOf, TENANTS } from './kit.js';

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

export function consoleTenantMoveRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);

  for (const move of ['suspend', 'resume'] as const) {
    const path = `/console/tenants/:tenantId/${move}`;
    const what = WHAT[move];

    api.page(
      router,
      { method: 'get', path },
      kit.read((ctx, op, t) => {
        const back = tenantPath(t.id);
        kit.confirm(ctx, op, t, {
          section: '',
          title: what.title,
          intro: `${esc(what.title)} <strong>${esc(t.name)}</strong> (<code>${esc(t.id)}</code>, now
${esc(t.lifecycle_state)}). ${esc(what.happens)}`,
          action: `${back}/${move}`,
          fields: `<input type="hidden" name="expected_state" value="${esc(t.lifecycle_state)}">
<input type="hidden" name="expected_updated_at" value="${t.updated_at}">
<label for="reason">Reason (kept in the audit log)</label>
<input id="reason" name="reason" type="text" required maxlength="1000">`,
          button: what.title,
          back,
        });
      }),
    );

    api.page(
      router,
      { method: 'post', path, parser: 'form' },
      kit.write({ dangerous: true }, async (ctx, op, t) => {
        const b = formOf(ctx);
        const req = {
          expected_state: field(b, 'expected_state'),
          expected_updated_at: Number(b.expected_updated_at),
          reason: field(b, 'reason'),
        };
        if (!req.reason || !Number.isSafeInteger(req.expected_updated_at))
          return kit.refuse(ctx, op, 400, what.title, 'A reason is needed. Go back and give one.', TENANTS);
        try {
          await deps.tenantLifecycle.move(t.id, move, req, actorOf(op));
        } catch (e) {
          // A stale precondition or a move that does not apply: the service's own sentence.
          return kit.failed(ctx, op, e, what.title, TENANTS);
        }
        kit.done(ctx, tenantPath(t.id));
      }),
    );
  }
  return router;
}
