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
import { consolePage, table, tenantTabs, type Column } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { operatorOf } from './kit.js';

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
    cell: (t) => `<a href="/console/tenants/${encodeURIComponent(t.id)}">${esc(t.name)}</a>`,
    sort: (t) => t.name.toLowerCase(),
  },
  { key: 'id', label: 'Id', cell: (t) => `<code>${esc(t.id)}</code>`, sort: (t) => t.id },
  { key: 'state', label: 'State', cell: (t) => esc(t.lifecycle_state), sort: (t) => t.lifecycle_state },
  {
    key: 'created',
    label: 'Created',
    cell: (t) => esc(new Date(t.created_at).toISOString().slice(0, 16).replace('T', ' ')),
    sort: (t) => t.created_at,
  },
];

const NO_TENANTS =
  'No tenants to show. A platform administrator creates one with <code>iam tenants create --name …</code>; ' +
  'a tenant administrator sees the tenants named by <code>iam operators add --role tenant-admin --tenant …</code>.';

/** The lifecycle move a writer may make from the tenant's page (tenant-moves.ts). */
const moves = (a: OperatorAccess, t: Tenant) => {
  if (!mayWrite(a, t.id)) return '';
  const move = t.lifecycle_state === 'active' ? 'suspend' : t.lifecycle_state === 'suspended' ? 'resume' : '';
  return move
    ? `<p><a class="button secondary" href="/console/tenants/${encodeURIComponent(t.id)}/${move}">` +
        `${move === 'suspend' ? 'Suspend' : 'Resume'} tenant…</a></p>`
    : '';
};

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
  for (const t of tenants) {
    if (
      t.lifecycle_state === 'provisioning' &&
      (await deps.provisioning.latest(t.id).catch(() => undefined))?.status === 'blocked'
    )
      blocked.push(t);
    const n = (await deps.fieldMapping.notifications.list(t.id, { state: 'open' }, OPEN_STATES_MAX)).length;
    if (n) open.push([t, n]);
  }
  const link = (t: Tenant) => `<a href="/console/tenants/${encodeURIComponent(t.id)}">${esc(t.name)}</a>`;
  const list = (items: string[], empty: string) =>
    items.length ? `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>` : `<p class="empty">${empty}</p>`;
  let out =
    `<h2>Provisioning blocked</h2>\n${list(
      blocked.map(link),
      'None. A blocked operation shows here with its tenant; retry it with <code>iam provisioning retry</code>.',
    )}` +
    `\n<h2>Open notification states</h2>\n${list(
      open.map(([t, n]) => `${link(t)}: ${n}${n === OPEN_STATES_MAX ? ' or more' : ''}`),
      'None open.',
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
  }
  return out;
}

export function consolePageRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();

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
    const tenants = await visibleTenants(deps, op.access);
    consolePage(ctx, {
      title: 'Tenants',
      current: '/console/tenants',
      user: op.user,
      body: table(ctx.query, '/console/tenants', tenantColumns, tenants, { caption: 'Tenants', empty: NO_TENANTS }),
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
    consolePage(ctx, {
      title: t.name,
      current: '/console/tenants',
      user: op.user,
      body: `${tenantTabs(t, '')}
<dl><dt>Id</dt><dd><code>${esc(t.id)}</code></dd><dt>State</dt><dd>${esc(t.lifecycle_state)}</dd>
<dt>Created</dt><dd>${esc(new Date(t.created_at).toISOString())}</dd></dl>${moves(op.access, t)}`,
    });
  });

  return router;
}
