/**
 * The operator console's pages (docs/console.md). Every page first finds the browser's session
 * and the operator's roles (read on every request, so a role taken away takes effect at once):
 * no session, 303 to /console/sign-in; a session of someone who is no operator, the 403 page.
 * A tenant administrator sees only their tenants: another tenant's id answers 404, never 403,
 * as the admin API does. Pages are views over the services the admin API uses; no rule of the
 * service is decided here.
 */
import Router from '@koa/router';
import type { Tenant } from '../../../shared/db/entities.js';
import { mayRead, mayWrite, seesAll, type OperatorAccess } from '../../../shared/services/console/operators.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { consolePage, table, tenantPath, utc, type Column } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { consoleKit, found, operatorOf } from './kit.js';
import { sessionTimeoutsSummary } from './session-policy.js';

/** At most this many tenants are listed (a platform of more pages them on the admin API). */
const TENANT_LIST_MAX = 1000;

/** The tenants the operator may see. */
async function visibleTenants(deps: AppDeps, a: OperatorAccess): Promise<Tenant[]> {
  const platform = await deps.operators.platformTenantId();
  if (seesAll(a)) return (await deps.directory.listTenants(TENANT_LIST_MAX)).filter((t) => t.id !== platform);
  const mine = new Set(a.tenants);
  return (await deps.directory.listTenants(TENANT_LIST_MAX)).filter((t) => mine.has(t.id));
}

const tenantColumns: Column<Tenant>[] = [
  {
    key: 'name',
    label: 'Name',
    cell: (t) => `<a href="${tenantPath(t.id)}">${esc(t.name)}</a>`,
    sort: (t) => t.name.toLowerCase(),
  },
  { key: 'id', label: 'Id', cell: (t) => `<code>${esc(t.id)}</code>`, sort: (t) => t.id },
  { key: 'state', label: 'State', cell: (t) => esc(t.lifecycle_state), sort: (t) => t.lifecycle_state },
  {
    key: 'created',
    label: 'Created',
    cell: (t) => utc(t.created_at),
    sort: (t) => t.created_at,
  },
];

const NO_TENANTS =
  'No tenants to show. A platform administrator creates one with <code>iam tenants create --name …</code>; ' +
  'a tenant administrator sees the tenants named by <code>iam operators add --role tenant-admin --tenant …</code>.';

/**
 * The moves a writer may make from the tenant's page: suspend or resume (tenant-moves.ts), and for
 * a platform administrator (the admin API's iam.platform moves, tenants-admin.ts) offboard an
 * active or suspended tenant.
 */
const moves = (a: OperatorAccess, t: Tenant) => {
  if (!mayWrite(a, t.id)) return '';
  const base = tenantPath(t.id);
  const move = t.lifecycle_state === 'active' ? 'suspend' : t.lifecycle_state === 'suspended' ? 'resume' : '';
  const links = move
    ? [`<a class="button secondary" href="${base}/${move}">${move === 'suspend' ? 'Suspend' : 'Resume'} tenant…</a>`]
    : [];
  if (a.platformAdmin && move) links.push(`<a class="button secondary" href="${base}/offboard">Offboard tenant…</a>`);
  return links.length ? `<p>${links.join(' ')}</p>` : '';
};

const when = (ms: number | null | undefined) => (ms === null || ms === undefined ? '-' : utc(ms, 'second'));
const cause = (code: string | null, text: string | null | undefined) =>
  code ? `<code>${esc(code)}</code>${text ? ` ${esc(text)}` : ''}` : '-';

/**
 * The tenant's latest provisioning operation, step by step with each step's stored failure cause,
 * and "Retry provisioning…" when it is blocked (a platform administrator's move).
 */
async function provisioningSection(deps: AppDeps, a: OperatorAccess, t: Tenant): Promise<string> {
  const op = await found(deps.provisioning.latest(t.id));
  if (!op) return '<h2>Provisioning</h2>\n<p class="empty">No provisioning operation is recorded for this tenant.</p>';
  const steps = op.steps
    .map(
      (s) =>
        `<tr><td data-label="Step"><code>${esc(s.step_key)}</code></td><td data-label="Status">${esc(s.status)}</td>` +
        `<td data-label="Attempts">${s.attempt_count}</td>` +
        `<td data-label="Error">${cause(s.last_error_code, s.last_error_cause)}</td></tr>`,
    )
    .join('\n');
  const retry =
    op.status === 'blocked' && a.platformAdmin
      ? `<p><a class="button" href="${tenantPath(t.id, '/provisioning/retry')}">` + 'Retry provisioning…</a></p>'
      : '';
  return `<h2>Provisioning</h2>
<dl><dt>Operation</dt><dd><code>${esc(op.operation_id)}</code></dd><dt>Status</dt><dd>${esc(op.status)}</dd>
<dt>Current step</dt><dd><code>${esc(op.current_step)}</code></dd>
<dt>Last error</dt><dd>${cause(op.last_error_code, op.last_error_cause)}</dd>
<dt>Retries by an operator</dt><dd>${op.retry_count}</dd></dl>
<table class="stack"><caption class="sr-only">Provisioning steps</caption>
<thead><tr><th scope="col">Step</th><th scope="col">Status</th><th scope="col">Attempts</th>
<th scope="col">Error</th></tr></thead>
<tbody>
${steps}
</tbody></table>${retry}`;
}

/** The tenant's recovery operations (disaster recovery; the moves are `iam recovery …`). */
async function recoverySection(deps: AppDeps, t: Tenant): Promise<string> {
  const ops = await deps.recovery.list(t.id, deps.config.recoveryStabilizationSeconds);
  if (!ops.length) return '<h2>Recovery operations</h2>\n<p class="empty">None: this tenant was never recovered.</p>';
  const rows = ops
    .map(
      (r) =>
        `<tr><td data-label="Operation"><code>${esc(r.operationId)}</code></td>` +
        `<td data-label="State">${esc(r.state)}</td>` +
        `<td data-label="Reactivated">${when(r.reactivatedAt)}</td>` +
        `<td data-label="Error">${cause(r.lastErrorCode, r.lastErrorCause)}</td></tr>`,
    )
    .join('\n');
  return `<h2>Recovery operations</h2>
<table class="stack"><caption class="sr-only">Recovery operations</caption>
<thead><tr><th scope="col">Operation</th><th scope="col">State</th><th scope="col">Reactivated</th>
<th scope="col">Error</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<p class="hint">Recovery moves are made with <code>iam recovery</code> (docs/tenant-lifecycle.md).</p>`;
}

/** At most this many trust sources are read per tenant on the overview (the service's page). */
const TRUST_SOURCES_MAX = 500;

const sourceStateOf = (payload: Record<string, unknown>) => {
  const polling = payload.polling as { sourceState?: unknown } | undefined;
  return typeof polling?.sourceState === 'string' ? polling.sourceState : 'missing';
};

/**
 * The figures /metrics has for the platform's own work: how late the most overdue federation
 * trust source is (the poller's own count, as iam_federation_poll_overdue_seconds reads it) and
 * each job's last lag (iam_job_lag_seconds, recorded by this daemon's scheduler: known only when
 * metrics are on).
 */
async function jobLag(deps: AppDeps): Promise<string> {
  const overdue = Math.round(await deps.federationPoller.overdueSeconds());
  const poll = `<p>Federation polls overdue by ${overdue} s${overdue ? '' : ' (none is overdue)'}.</p>`;
  const lags = deps.metrics ? await deps.metrics.jobLags() : undefined;
  if (!lags)
    return `${poll}\n<p class="empty">Job lag is measured when metrics are on (<code>IAM_METRICS_PORT</code>).</p>`;
  if (!lags.length) return `${poll}\n<p class="empty">No scheduled job has run yet on this daemon.</p>`;
  const rows = [...lags]
    .sort((a, b) => b.seconds - a.seconds)
    .map(
      (l) =>
        `<tr><td data-label="Job"><code>${esc(l.job)}</code></td>` +
        `<td data-label="Lag">${l.seconds.toFixed(1)} s</td></tr>`,
    )
    .join('');
  return `${poll}\n<table class="stack"><caption class="sr-only">Job lag</caption>
<thead><tr><th scope="col">Job</th><th scope="col">Last lag</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** At most this many open notification states are counted per tenant on the overview. */
const OPEN_STATES_MAX = 100;

/**
 * The overview's other figures, each from the service the admin API reads: provisioning
 * operations blocked (a tenant still provisioning whose latest operation is `blocked`), open
 * operational notification states per tenant, and (for those who see every tenant: it is the
 * platform's) the outbox backlog by kind and status.
 */
async function overviewFigures(deps: AppDeps, a: OperatorAccess, tenants: Tenant[]): Promise<string> {
  const blocked: Tenant[] = [];
  const open: [Tenant, number][] = [];
  const unhealthy: [Tenant, number][] = [];
  for (const t of tenants) {
    // The sources whose last poll did not leave a good copy (docs/federation.md, "sourceState").
    const sources = await deps.fieldMapping.trustSources.list(t.id, TRUST_SOURCES_MAX);
    const bad = sources.filter((s) => sourceStateOf(s.protocolPayload) !== 'healthy').length;
    if (bad) unhealthy.push([t, bad]);
    if (t.lifecycle_state === 'provisioning' && (await found(deps.provisioning.latest(t.id)))?.status === 'blocked')
      blocked.push(t);
    const n = (await deps.fieldMapping.notifications.list(t.id, { state: 'open' }, OPEN_STATES_MAX)).length;
    if (n) open.push([t, n]);
  }
  const link = (t: Tenant, section = '') => `<a href="${tenantPath(t.id, section)}">${esc(t.name)}</a>`;
  const list = (items: string[], empty: string) =>
    items.length ? `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>` : `<p class="empty">${empty}</p>`;
  let out =
    `<h2>Provisioning blocked</h2>\n${list(
      blocked.map((t) => link(t)),
      'None. A blocked operation shows here with its tenant; retry it with <code>iam provisioning retry</code>.',
    )}` +
    `\n<h2>Open notification states</h2>\n${list(
      open.map(([t, n]) => `${link(t, '/notifications')}: ${n}${n === OPEN_STATES_MAX ? ' or more' : ''}`),
      'None open.',
    )}` +
    `\n<h2>Federation sources not healthy</h2>\n${list(
      unhealthy.map(([t, n]) => `${link(t, '/federation')}: ${n}`),
      'None: every federation trust source holds a good copy of its metadata.',
    )}`;
  if (seesAll(a)) {
    const rows = await deps.outbox.backlog();
    out += `\n<h2>Outbox backlog</h2>\n${list(
      rows.map(
        (r) =>
          `<code>${esc(r.kind)}</code> ${esc(r.status)}: ${r.count}` +
          (r.oldestDueSeconds === undefined ? '' : ` (oldest due ${Math.round(r.oldestDueSeconds)} s ago)`),
      ),
      'Empty: every message was delivered.',
    )}`;
    out += `\n<h2>Job lag</h2>\n${await jobLag(deps)}`;
  }
  return out;
}

export function consolePageRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);

  api.page(router, { method: 'get', path: '/console' }, async (ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return;
    const tenants = await visibleTenants(deps, op.access);
    const byState = new Map<string, number>();
    for (const t of tenants) byState.set(t.lifecycle_state, (byState.get(t.lifecycle_state) ?? 0) + 1);
    const rows = [...byState].sort(([a], [b]) => a.localeCompare(b));
    const states = rows.length
      ? `<table><caption class="sr-only">Tenants by state</caption>
<thead><tr><th scope="col">State</th><th scope="col">Tenants</th></tr></thead><tbody>${rows
          .map(([s, n]) => `<tr><td>${esc(s)}</td><td>${n}</td></tr>`)
          .join('')}</tbody></table>`
      : `<p class="empty">${NO_TENANTS}</p>`;
    const figures = await overviewFigures(deps, op.access, tenants);
    consolePage(ctx, {
      title: 'Overview',
      current: '/console',
      user: op.user,
      body: `<h2>Tenants by state</h2>\n${states}\n<p><a href="/console/tenants">All tenants</a></p>\n${figures}`,
    });
  });

  api.page(router, { method: 'get', path: '/console/tenants' }, async (ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return;
    const all = await visibleTenants(deps, op.access);
    // The filters narrow what the operator may see anyway: a view, no rule (the admin API's
    // list filters by lifecycle_state and name_prefix; the console matches any part of the name).
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim().slice(0, 200) : '';
    const tenants = all.filter(
      (t) => (!state || t.lifecycle_state === state) && (!q || t.name.toLowerCase().includes(q.toLowerCase())),
    );
    const states = [...new Set(all.map((t) => t.lifecycle_state))].sort();
    const keep = new URLSearchParams([...(state ? [['state', state]] : []), ...(q ? [['q', q]] : [])]).toString();
    const form = `<form method="get" action="/console/tenants" class="filters">
<label for="f-state">State</label><select id="f-state" name="state"><option value="">Any</option>${states
      .map((s) => `<option value="${esc(s)}"${s === state ? ' selected' : ''}>${esc(s)}</option>`)
      .join('')}</select>
<label for="f-q">Name contains</label><input id="f-q" name="q" type="search" value="${esc(q)}">
<button type="submit" class="secondary">Filter</button></form>`;
    const create = op.access.platformAdmin
      ? '<p><a class="button" href="/console/tenants/new">Create tenant</a></p>'
      : '';
    const empty = all.length ? 'No tenant matches these filters. Clear a filter to see more.' : NO_TENANTS;
    consolePage(ctx, {
      title: 'Tenants',
      current: '/console/tenants',
      user: op.user,
      body: `${create}${form}\n${table(ctx.query, `/console/tenants${keep ? `?${keep}` : ''}`, tenantColumns, tenants, {
        caption: 'Tenants',
        empty,
      })}`,
    });
  });

  api.page(router, { method: 'get', path: '/console/tenants/:tenantId' }, async (ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return;
    const id = ctx.params.tenantId;
    const t = mayRead(op.access, id) ? (await visibleTenants(deps, op.access)).find((x) => x.id === id) : undefined;
    if (!t) {
      // Another tenant's id, or none: 404 alike (docs/console.md, "Roles").
      consolePage(ctx, {
        status: 404,
        title: 'Tenant not found',
        current: '/console/tenants',
        user: op.user,
        body: '<p>No such tenant among those you administer. <a href="/console/tenants">Back to the tenants</a>.</p>',
      });
      return;
    }
    // The admin API's read of the tenant (GET /api/admin/tenants/{id}): its purge date and counts.
    const { tenant: detail } = await deps.tenantDirectory.get(t.id);
    kit.show(
      ctx,
      op,
      t,
      '',
      t.name,
      `<dl><dt>Id</dt><dd><code>${esc(t.id)}</code></dd><dt>State</dt><dd>${esc(t.lifecycle_state)}</dd>
<dt>Created</dt><dd>${esc(new Date(t.created_at).toISOString())}</dd>${
        detail.purge_after ? `<dt>Purged after (UTC)</dt><dd>${when(detail.purge_after)}</dd>` : ''
      }
<dt>Users</dt><dd>${detail.counts.users}</dd><dt>Applications</dt><dd>${detail.counts.clients}</dd>
<dt>Active sessions</dt><dd>${detail.counts.active_sessions}</dd></dl>${moves(op.access, t)}
${sessionTimeoutsSummary(t, mayWrite(op.access, t.id))}
${await provisioningSection(deps, op.access, t)}
${await recoverySection(deps, t)}`,
    );
  });

  return router;
}
