/**
 * A tenant's session timeouts in the console (docs/security.md, "Session timeouts"): the idle
 * and absolute lifetime of its browser sessions, shown on the tenant's Summary page and edited
 * at /console/tenants/:tenantId/session-policy.
 *
 * - GET: the form, with the timeouts as stored (`30m`, `12h`; empty: none) and the ETag of what
 *   it shows in a hidden field.
 * - POST: the console's checks (kit.ts: 404, CSRF, writer, step-up: a dangerous move, since a
 *   short timeout signs every user of the tenant out at their next click), then
 *   SessionPolicyService.update, the admin API's PUT, with the ETag as If-Match (a change in
 *   between is 412), audited `tenant.session_policy.update` with the operator's user id. A value
 *   that is not a duration, or that the service refuses, re-renders the form with the sentence
 *   (400). 303 back to the Summary.
 */
import Router from '@koa/router';
import type { Tenant } from '../../../shared/db/entities.js';
import { formatDuration, parseDurationText } from '../../../shared/schemas/session-policy.js';
import { ApiError } from '../../../shared/errors.js';
import { sessionPolicyOf } from '../../../shared/services/session-policy.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { tenantPath } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { actorOf, consoleKit, field, formOf, TENANTS, type Ctx, type Operator } from './kit.js';

const TITLE = 'Edit session timeouts';
const DURATION_HINT = 'A duration such as 30m, 12h or 7d (at least 5m); empty: ';

/**
 * The Summary page's lines: the two timeouts in force, and the edit link for a writer. Read from
 * the tenant row the page already holds (what SessionPolicyService.view would read again).
 */
export function sessionTimeoutsSummary(t: Tenant, canWrite: boolean): string {
  const p = sessionPolicyOf(t.settings?.sessions);
  const link = canWrite ? `\n<p><a href="${tenantPath(t.id, '/session-policy')}">Edit session timeouts…</a></p>` : '';
  return `<h2>Session timeouts</h2>
<dl><dt>Idle timeout</dt><dd>${p.idleTimeoutSeconds ? esc(formatDuration(p.idleTimeoutSeconds)) : 'None'}</dd>
<dt>Absolute lifetime</dt><dd>${
    p.maxLifetimeSeconds ? esc(formatDuration(p.maxLifetimeSeconds)) : "7d (the service's default)"
  }</dd></dl>${link}`;
}

export function consoleSessionPolicyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);
  const path = '/console/tenants/:tenantId/session-policy';

  const form = (ctx: Ctx, op: Operator, t: Tenant, v: { idle: string; max: string; etag: string }, alert?: string) => {
    const back = tenantPath(t.id);
    kit.confirm(ctx, op, t, {
      section: '',
      title: TITLE,
      ...(alert ? { alert: esc(alert) } : {}),
      intro: `How long a browser session of <strong>${esc(t.name)}</strong> may sit unused, and how long it may
live at all. The new timeouts apply to every live session of the tenant at its next request: a shorter one
signs out the sessions already past it. The idle timeout is precise to a minute.`,
      action: `${back}/session-policy`,
      fields: `<input type="hidden" name="etag" value="${esc(v.etag)}">
<label for="idle">Idle timeout</label>
<input id="idle" name="idle" type="text" value="${esc(v.idle)}" aria-describedby="idle-hint">
<p class="hint" id="idle-hint">${DURATION_HINT}no idle timeout.</p>
<label for="max">Absolute lifetime</label>
<input id="max" name="max" type="text" value="${esc(v.max)}" aria-describedby="max-hint">
<p class="hint" id="max-hint">${DURATION_HINT}the service's 7 days (also the most).</p>`,
      button: 'Save session timeouts',
      back,
    });
  };

  api.page(
    router,
    { method: 'get', path },
    kit.read(async (ctx, op, t) => {
      const { view, etag } = await deps.sessionPolicy.view(t.id);
      const text = (s: number | undefined) => (s === undefined ? '' : formatDuration(s));
      form(ctx, op, t, { idle: text(view.policy.idleTimeoutSeconds), max: text(view.policy.maxLifetimeSeconds), etag });
    }),
  );

  api.page(
    router,
    { method: 'post', path, parser: 'form' },
    kit.write({ dangerous: true }, async (ctx, op, t) => {
      const b = formOf(ctx);
      const typed = { idle: field(b, 'idle'), max: field(b, 'max'), etag: field(b, 'etag') };
      const input: Record<string, number> = {};
      for (const [name, key, label] of [
        ['idle', 'idleTimeoutSeconds', 'Idle timeout'],
        ['max', 'maxLifetimeSeconds', 'Absolute lifetime'],
      ] as const) {
        if (!typed[name]) continue;
        const s = parseDurationText(typed[name]);
        if (s === undefined) {
          form(ctx, op, t, typed, `${label}: not a duration; write it like 30m, 12h or 7d.`);
          ctx.status = 400;
          return;
        }
        input[key] = s;
      }
      try {
        await deps.sessionPolicy.update(t.id, input, actorOf(op), typed.etag ? { ifMatch: typed.etag } : {});
      } catch (e) {
        // Out of bounds (400): the form again with the service's sentence; 412 and the rest:
        // the service's own page.
        if (e instanceof ApiError && e.status === 400) {
          form(ctx, op, t, typed, e.message);
          ctx.status = 400;
          return;
        }
        return kit.failed(ctx, op, e, TITLE, TENANTS);
      }
      kit.done(ctx, tenantPath(t.id));
    }),
  );
  return router;
}
