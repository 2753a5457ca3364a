/**
 * The platform's tenant moves in the console (docs/console.md, "Tenants"): create a tenant, retry
 * a blocked provisioning, offboard a tenant. Each is the admin API's move, through the service its
 * route calls, and, like those routes (iam.platform only), a platform administrator's alone:
 * the posts are guarded with no tenant (kit.guard with null), so a tenant administrator of the
 * tenant gets 403 and an auditor 403, as everywhere.
 *
 * - GET/POST /console/tenants/new: ProvisioningService.createTenant (POST /api/admin/tenants);
 *   303 to the new tenant's summary, where the provisioning job's progress shows.
 * - GET/POST /console/tenants/:tenantId/provisioning/retry: ProvisioningService.retry
 *   (POST /api/admin/tenants/{id}/provisioning/retry); 303 to the summary.
 * - GET/POST /console/tenants/:tenantId/offboard: TenantDirectoryService.offboard (POST
 *   /api/admin/tenants/{id}/offboard), dangerous (step-up) with the tenant id typed.
 */
import Router from '@koa/router';
import { ApiError } from '../../../shared/errors.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { consolePage, tenantPath } from '../../views/console.js';
import { esc } from '../../views/html.js';
import {
  actorOf,
  confirmField,
  consoleKit,
  field,
  formOf,
  operatorOf,
  type Ctx,
  type Operator,
  TENANTS,
} from './kit.js';

const summaryOf = (id: string) => tenantPath(id);

export function consoleTenantAdminRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);

  /** The create form, with the service's refusal next to the field (inline validation). */
  const createForm = (ctx: Ctx, op: Operator, name = '', error = '', status = 200) =>
    consolePage(ctx, {
      status,
      title: 'Create tenant',
      current: TENANTS,
      user: op.user,
      body: `<p>The tenant is created in the state <code>provisioning</code>; the provisioning job sets it up and
makes it <code>active</code>, usually within seconds. Its summary shows each step.</p>
<form method="post" action="/console/tenants/new">
${kit.csrfField(op)}
<label for="name">Name</label>
<input id="name" name="name" type="text" required maxlength="200" value="${esc(name)}"${
        error ? ' aria-invalid="true" aria-describedby="name-error"' : ''
      }>
${error ? `<p id="name-error" class="error" role="alert">${esc(error)}</p>` : ''}
<button type="submit">Create tenant</button>
</form>
<p><a href="${TENANTS}">Cancel</a></p>`,
    });

  api.page(router, { method: 'get', path: '/console/tenants/new' }, async (ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return;
    if (!kit.platformPage(ctx, op, TENANTS)) return;
    createForm(ctx, op);
  });

  api.page(router, { method: 'post', path: '/console/tenants/new', parser: 'form' }, async (ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return;
    if (!kit.platformPage(ctx, op, TENANTS)) return;
    if (!(await kit.guard(ctx, op, null, { current: TENANTS }))) return;
    const name = field(formOf(ctx), 'name');
    let id: string;
    try {
      ({
        tenant: { id },
      } = await deps.provisioning.createTenant({ name }, actorOf(op)));
    } catch (e) {
      // The service's own sentence beside the field it names (a blank or too long name).
      if (e instanceof ApiError && e.status === 400) return createForm(ctx, op, name, e.message, 400);
      return kit.failed(ctx, op, e, 'Create tenant', TENANTS);
    }
    kit.done(ctx, summaryOf(id));
  });

  const retryPath = '/console/tenants/:tenantId/provisioning/retry';
  api.page(
    router,
    { method: 'get', path: retryPath },
    kit.read((ctx, op, t) => {
      const back = summaryOf(t.id);
      kit.confirm(ctx, op, t, {
        section: '',
        title: 'Retry provisioning',
        intro: `Retry the blocked provisioning of <strong>${esc(t.name)}</strong> (<code>${esc(t.id)}</code>). The
operation is queued again from the step that failed; the steps already done are kept. Fix what the step's error
names first, or it blocks again.`,
        action: `${back}/provisioning/retry`,
        button: 'Retry provisioning',
        back,
      });
    }),
  );

  api.page(
    router,
    { method: 'post', path: retryPath, parser: 'form' },
    kit.write({ platform: true }, async (ctx, op, t) => {
      try {
        await deps.provisioning.retry(t.id, actorOf(op));
      } catch (e) {
        // Not blocked (409 provisioning_not_blocked) or no operation (404): the service's sentence.
        return kit.failed(ctx, op, e, 'Retry provisioning', TENANTS);
      }
      kit.done(ctx, summaryOf(t.id));
    }),
  );

  const offboardPath = '/console/tenants/:tenantId/offboard';
  api.page(
    router,
    { method: 'get', path: offboardPath },
    kit.read((ctx, op, t) => {
      const back = summaryOf(t.id);
      kit.confirm(ctx, op, t, {
        section: '',
        title: 'Offboard tenant',
        intro: `Offboard <strong>${esc(t.name)}</strong> (<code>${esc(t.id)}</code>, now ${esc(t.lifecycle_state)}).
Its users can no longer sign in and its tokens stop being accepted at once. After the grace period the purge deletes
everything the tenant owns (the audit log stays); until then <code>iam tenants restore</code> brings it back. Take
an export first (<code>iam tenants export</code>).`,
        action: `${back}/offboard`,
        fields: `<label for="reason">Reason (kept in the audit log)</label>
<input id="reason" name="reason" type="text" maxlength="1000">
${confirmField(t.id, 'the tenant id')}`,
        button: 'Offboard tenant',
        back,
      });
    }),
  );

  api.page(router, { method: 'post', path: offboardPath, parser: 'form' }, async (ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return;
    const t = await kit.tenantOf(ctx, op);
    if (!t) return;
    // The tenant id typed (docs/console.md, "Tenants": unique, unlike a name); checked by the kit
    // against the tenant's own id as stored (the page shows that one), not the path's spelling:
    // hence not kit.write, whose typed text comes from the request.
    if (!(await kit.guard(ctx, op, null, { dangerous: true, confirm: t.id, current: TENANTS }))) return;
    const reason = field(formOf(ctx), 'reason');
    try {
      // The service's own confirmation is the tenant's name: the operator confirmed this tenant by
      // its id above, on a page that named it, so its name is passed as read now.
      await deps.tenantDirectory.offboard(t.id, { confirm: t.name, ...(reason ? { reason } : {}) }, actorOf(op));
    } catch (e) {
      return kit.failed(ctx, op, e, 'Offboard tenant', TENANTS);
    }
    kit.done(ctx, summaryOf(t.id));
  });

  return router;
}
