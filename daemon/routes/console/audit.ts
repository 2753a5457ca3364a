/**
 * The console's audit log (docs/console.md, "Audit log"): the admin API's audit query
 * (AuditLog.page, newest first, keyset pages under a signed cursor) behind a filter form of
 * actor, action, target, tenant and time, each event's detail (its summary, request id) in a
 * disclosure. A tenant administrator reads only their tenants' events: with no tenant named,
 * the first of them; another tenant's id, 404. A platform administrator or an auditor reads every
 * tenant's, and the platform's own events (no tenant).
 */
import Router from '@koa/router';
import { ApiError } from '../../../shared/errors.js';
import type { AuditEvent } from '../../../shared/db/entities.js';
import { mayRead, seesAll } from '../../../shared/services/console/operators.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { consolePage, utc } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { operatorOf } from './kit.js';

const PAGE_SIZE = 50;
const FIELD = /^[\w.:@+-]{1,200}$/;

const text = (v: unknown) => (typeof v === 'string' && FIELD.test(v.trim()) ? v.trim() : undefined);
/** A `datetime-local` or ISO time, as epoch ms. */
const time = (v: unknown) => {
  if (typeof v !== 'string' || !v) return undefined;
  const ms = Date.parse(v.length === 16 ? `${v}:00Z` : v);
  return Number.isFinite(ms) ? ms : undefined;
};

function row(e: AuditEvent): string {
  return `<tr><td data-label="Time">${utc(e.created_at, 'second')}</td>
<td data-label="Actor">${esc(e.actor_type)} <code>${esc(e.actor_id)}</code></td>
<td data-label="Action"><code>${esc(e.action)}</code>${e.outcome === 'failure' ? ' <strong>failed</strong>' : ''}</td>
<td data-label="Target">${esc(e.target_type)} <code>${esc(e.target_id)}</code></td>
<td data-label="Detail"><details><summary>Detail</summary><dl>
<dt>Event</dt><dd><code>${esc(e.id)}</code></dd><dt>Tenant</dt><dd><code>${esc(e.tenant_id ?? 'platform')}</code></dd>
<dt>Request</dt><dd><code>${esc(e.request_id ?? '-')}</code></dd>
<dt>Summary</dt><dd><pre>${esc(JSON.stringify(e.summary, null, 2))}</pre></dd></dl></details></td></tr>`;
}

export function consoleAuditRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();

  api.page(router, { method: 'get', path: '/console/audit' }, async (ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return;
    const q = ctx.query;
    const asked = text(q.tenant);
    const tenantId = asked ?? (seesAll(op.access) ? undefined : op.access.tenants[0]);
    const frame = (status: number, body: string) =>
      consolePage(ctx, { status, title: 'Audit log', current: '/console/audit', user: op.user, body });
    if (tenantId !== undefined && !mayRead(op.access, tenantId))
      return frame(404, '<p role="alert">No such tenant among those you administer.</p>');
    const filters = {
      actor: text(q.actor),
      action: text(q.action),
      target: text(q.target),
      since: time(q.since),
      until: time(q.until),
    };
    let page;
    try {
      page = await deps.auditLog.page({
        tenantId,
        actorId: filters.actor,
        action: filters.action,
        targetId: filters.target,
        since: filters.since,
        until: filters.until,
        limit: PAGE_SIZE,
        cursor: typeof q.cursor === 'string' && q.cursor ? q.cursor : undefined,
      });
    } catch (e) {
      if (e instanceof ApiError && e.status === 400) return frame(400, `<p role="alert">${esc(e.message)}</p>`);
      throw e;
    }
    const input = (name: string, label: string, value: string | undefined, type = 'text') =>
      `<label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" type="${type}" value="${esc(
        value ?? '',
      )}">`;
    const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString().slice(0, 16));
    const form = `<form method="get" action="/console/audit" class="filters">
${input('tenant', 'Tenant id', tenantId)}${input('actor', 'Actor id', filters.actor)}
${input('action', 'Action', filters.action)}${input('target', 'Target id', filters.target)}
${input('since', 'From (UTC)', iso(filters.since), 'datetime-local')}
${input('until', 'Until (UTC)', iso(filters.until), 'datetime-local')}
<button type="submit" class="secondary">Filter</button></form>`;
    const keep = new URLSearchParams();
    for (const [k, v] of Object.entries({ tenant: tenantId, ...filters }))
      if (v !== undefined) keep.set(k, k === 'since' || k === 'until' ? iso(v as number)! : String(v));
    const next = page.next_cursor
      ? `<nav class="paging" aria-label="Pages"><a rel="next" href="/console/audit?${esc(
          new URLSearchParams([...keep, ['cursor', page.next_cursor]]).toString(),
        )}">Older events</a></nav>`
      : '';
    const list = page.events.length
      ? `<table class="stack"><caption class="sr-only">Audit events, newest first</caption>
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">Actor</th><th scope="col">Action</th>
<th scope="col">Target</th><th scope="col">Detail</th></tr></thead>
<tbody>${page.events.map(row).join('\n')}</tbody></table>${next}`
      : '<p class="empty">No events match these filters. Widen the time range or clear a filter.</p>';
    frame(200, `${form}\n${list}`);
  });

  return router;
}
