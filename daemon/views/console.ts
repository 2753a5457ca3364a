/**
 * The operator console's frame (docs/console.md): a navigation bar over a wide column, a table
 * component with sortable column headers and paging links (plain links: no script), empty states
 * that say what to do, and the 403 page of a signed-in person who is no operator. Rendered by
 * renderPage, so every console page has the nonce CSP, frame-ancestors 'none' and
 * X-Frame-Options DENY of the other pages, and the one stylesheet (daemon/views/style.ts).
 * English only so far: the console's words get their de/fr catalogue entries once the pages
 * settle (docs/console.md, "What remains").
 */
import type { ParameterizedContext } from 'koa';
import { esc, renderPage } from './html.js';

/**
 * A time as the console writes it: UTC, `YYYY-MM-DD HH:MM`, or with the seconds where they tell
 * events apart (the audit log, polls). Digits and separators only: nothing to escape.
 */
export const utc = (ms: number, to: 'minute' | 'second' = 'minute') =>
  new Date(ms)
    .toISOString()
    .slice(0, to === 'second' ? 19 : 16)
    .replace('T', ' ');

export interface ConsoleUser {
  email: string;
  /** The role in words, shown beside the address. */
  role: string;
}

const NAV: [string, string][] = [
  ['/console', 'Overview'],
  ['/console/tenants', 'Tenants'],
  ['/console/audit', 'Audit log'],
  ['/console/operators', 'Operators'],
];

/**
 * A tenant's sections, each a page under /console/tenants/:tenantId (docs/console.md, "Pages").
 * The empty path is the tenant's summary.
 */
export const TENANT_SECTIONS: [string, string][] = [
  ['', 'Summary'],
  ['/users', 'Users'],
  ['/applications', 'Applications'],
  ['/identity-providers', 'Identity providers'],
  ['/claims', 'Custom claims'],
  ['/plugins', 'Plugins'],
  ['/federation', 'Federation'],
  ['/notifications', 'Notifications'],
  ['/approvals', 'Approvals'],
  ['/agent-grants', 'Agent grants'],
  ['/token-exchange', 'Token exchange'],
  ['/email', 'Email'],
];

/** A tenant's page in the console: its summary, or `section` (one of TENANT_SECTIONS' paths, or a deeper one). */
export const tenantPath = (tenantId: string, section = '') =>
  `/console/tenants/${encodeURIComponent(tenantId)}${section}`;

/**
 * The tenant's section links above a tenant page's body, `section` (one of TENANT_SECTIONS'
 * paths) marked current. Wraps on a narrow screen.
 */
export function tenantTabs(tenant: { id: string; name: string }, section: string): string {
  const base = tenantPath(tenant.id);
  const links = TENANT_SECTIONS.map(
    ([path, label]) =>
      `<a href="${esc(base + path)}"${path === section ? ' aria-current="page"' : ''}>${esc(label)}</a>`,
  ).join('');
  return `<nav class="tabs" aria-label="${esc(tenant.name)}">${links}</nav>`;
}

/** One console page: navigation (the current page marked for assistive technology), then `body`. */
export function consolePage(
  ctx: ParameterizedContext,
  p: { title: string; body: string; user: ConsoleUser; current: string; status?: number },
): void {
  const nav = NAV.map(
    ([href, label]) => `<a href="${href}"${href === p.current ? ' aria-current="page"' : ''}>${esc(label)}</a>`,
  ).join('');
  renderPage(ctx, {
    status: p.status,
    title: `${p.title} · Console`,
    body: `<div class="wide console-frame">
<nav class="console" aria-label="Console">${nav}
<span class="hint">${esc(p.user.email)} (${esc(p.user.role)})</span></nav>
<h1>${esc(p.title)}</h1>
${p.body}
</div>`,
  });
}

export interface Column<R> {
  key: string;
  label: string;
  cell: (row: R) => string;
  /** The value a sort by this column compares; unsortable without. */
  sort?: (row: R) => string | number;
}

/**
 * A table of `rows` (all of them, already scoped to what the operator may see), sorted by the
 * `sort` query parameter (`key` or `-key`) and cut into pages of `size` by `page` (1-based).
 * Header links flip the order; "Previous"/"Next" keep the sort. `empty` is what to do when there
 * is nothing (an empty state, not an empty table).
 */
export function table<R>(
  q: Record<string, unknown>,
  base: string,
  columns: Column<R>[],
  rows: R[],
  opts: { caption: string; empty: string; size?: number },
): string {
  if (!rows.length) return `<p class="empty">${opts.empty}</p>`;
  const size = opts.size ?? 25;
  const rawSort = typeof q.sort === 'string' ? q.sort : '';
  const desc = rawSort.startsWith('-');
  const col = columns.find((c) => c.sort && c.key === rawSort.replace(/^-/, ''));
  const sorted = col
    ? [...rows].sort((a, b) => {
        const x = col.sort!(a);
        const y = col.sort!(b);
        const r = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        return desc ? -r : r;
      })
    : rows;
  const pages = Math.max(1, Math.ceil(sorted.length / size));
  const asked = Number.parseInt(typeof q.page === 'string' ? q.page : '1', 10);
  const page = Number.isFinite(asked) ? Math.min(Math.max(asked, 1), pages) : 1;
  const link = (sort: string, n: number) => {
    const u = new URLSearchParams();
    if (sort) u.set('sort', sort);
    if (n > 1) u.set('page', String(n));
    const s = u.toString();
    // `base` may carry a page's own filters (a search): sort and page join them.
    return `${base}${s ? `${base.includes('?') ? '&' : '?'}${s}` : ''}`;
  };
  const sortNow = col ? rawSort : '';
  const head = columns
    .map((c) => {
      if (!c.sort) return `<th scope="col">${esc(c.label)}</th>`;
      const on = col === c;
      const aria = on ? ` aria-sort="${desc ? 'descending' : 'ascending'}"` : '';
      const next = on && !desc ? `-${c.key}` : c.key;
      return `<th scope="col"${aria}><a href="${esc(link(next, 1))}">${esc(c.label)}</a></th>`;
    })
    .join('');
  const body = sorted
    .slice((page - 1) * size, page * size)
    .map((r) => `<tr>${columns.map((c) => `<td data-label="${esc(c.label)}">${c.cell(r)}</td>`).join('')}</tr>`)
    .join('\n');
  const prev = page > 1 ? `<a href="${esc(link(sortNow, page - 1))}" rel="prev">Previous</a>` : '';
  const nextLink = page < pages ? `<a href="${esc(link(sortNow, page + 1))}" rel="next">Next</a>` : '';
  const paging =
    pages > 1
      ? `<nav class="paging" aria-label="Pages">${prev} <span>Page ${page} of ${pages}</span> ${nextLink}</nav>`
      : '';
  return `<table class="stack"><caption class="sr-only">${esc(opts.caption)}</caption>
<thead><tr>${head}</tr></thead>
<tbody>
${body}
</tbody></table>${paging}`;
}

/** A signed-in person who holds no operator role: 403, and what to do about it. */
export function notOperatorPage(ctx: ParameterizedContext, email: string): void {
  renderPage(ctx, {
    status: 403,
    title: 'Not an operator',
    body: `<h1>Not an operator</h1>
<p role="alert">You are signed in as ${esc(email)}, which holds no operator role,
so the console has nothing to show you.</p>
<p>An operator role is given by a platform administrator (<code>iam operators add --email … --role …</code>). If you
meant to use another account, <a href="/account">open your account page</a> and sign out first.</p>`,
  });
}
