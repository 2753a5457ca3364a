/**
 * Operators in the console (docs/console.md, "Operators"): a page of the platform's own, read by
 * those who see every tenant (platform administrators and auditors; a tenant administrator gets
 * the 404 page), changed by a platform administrator alone (kit.guard with tenantId null).
 *
 * - GET /console/operators: every operator role held (email, role, tenant), sortable.
 * - GET/POST /console/operators/new: give a person an operator role (a dangerous move: step-up).
 *   A refusal of the service (a tenant-admin without a tenant, an address that is not one) is
 *   shown next to its field, the form kept, status the service's (400).
 * - GET/POST /console/operators/:userId/remove?role=…&tenant=…: take one role away, confirmed by
 *   typing the operator's address (a role taken away by mistake locks a person out; the CLI's
 *   `--email` is that address typed already).
 *   The last platform administrator's role is refused by the service (409
 *   `last_platform_admin`), shown in its own sentence.
 *
 * Both moves are OperatorService's (`iam operators add|remove` call the same), audited with the
 * operator's user id as the actor (`operator.add` / `operator.remove`, and RBAC's
 * `role.assign` / `role.unassign`).
 */
import Router from '@koa/router';
import { ApiError } from '../../../shared/errors.js';
import { OPERATOR_ROLES, type OperatorView } from '../../../shared/services/console/operators.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { consolePage, table, tenantPath, type Column } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { actorOf, confirmField, consoleKit, field, formOf, operatorOf, type Ctx, type Operator } from './kit.js';

const CURRENT = '/console/operators';
/** At most this many tenants are offered in the form's tenant list (as the tenants page lists). */
const TENANT_LIST_MAX = 1000;

const ROLE_WORDS: Record<(typeof OPERATOR_ROLES)[number], string> = {
  'platform-admin': 'Platform administrator (every tenant, read and write)',
  'tenant-admin': 'Tenant administrator (the tenant chosen below)',
  auditor: 'Auditor (every tenant, read only)',
};

/** The link to the removal of one operator role: the row's identity in the query. */
const removeHref = (o: OperatorView) => {
  const q = new URLSearchParams({ role: o.role });
  if (o.tenant_id) q.set('tenant', o.tenant_id);
  return `${CURRENT}/${encodeURIComponent(o.user_id)}/remove?${q.toString()}`;
};

const roleLabel = (o: OperatorView) => (o.tenant_id ? `${o.role} of` : o.role);

interface AddValues {
  email: string;
  role: string;
  tenant: string;
}

export function consoleOperatorRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);
  /** A handler of these pages: the operator, then the platform's own pages' check (404 for a tenant administrator). */
  const platformOnly = (h: (ctx: Ctx, op: Operator) => Promise<void>) => async (ctx: Ctx) => {
    const op = await operatorOf(deps, ctx);
    if (op && kit.platformPage(ctx, op, CURRENT)) await h(ctx, op);
  };

  /** The tenants an operator role may name, by name (the platform tenant is no tenant administered). */
  const tenantNames = async () => {
    const platform = await deps.operators.platformTenantId();
    const all = (await deps.directory.listTenants(TENANT_LIST_MAX)).filter((t) => t.id !== platform);
    return new Map(all.map((t) => [t.id, t.name]));
  };

  const columns = (op: Operator, names: Map<string, string>): Column<OperatorView>[] => [
    { key: 'email', label: 'Email', cell: (o) => esc(o.email), sort: (o) => o.email },
    { key: 'role', label: 'Role', cell: (o) => esc(o.role), sort: (o) => o.role },
    {
      key: 'tenant',
      label: 'Tenant',
      cell: (o) => {
        if (!o.tenant_id) return 'every tenant';
        const name = names.get(o.tenant_id);
        // A purged tenant's role grants nothing (docs/console.md, "Roles"): shown as such.
        const id = `<code>${esc(o.tenant_id)}</code>`;
        return name ? `<a href="${tenantPath(o.tenant_id)}">${esc(name)}</a> ${id}` : `${id} (no such tenant)`;
      },
      sort: (o) => (o.tenant_id ? (names.get(o.tenant_id) ?? o.tenant_id).toLowerCase() : ''),
    },
    // Only a platform administrator changes operators: the others see no link to a form.
    ...(op.access.platformAdmin
      ? [
          {
            key: 'remove',
            label: 'Remove',
            cell: (o: OperatorView) =>
              `<a href="${esc(removeHref(o))}">Remove…` +
              `<span class="sr-only"> ${esc(o.email)} as ${esc(roleLabel(o))}</span></a>`,
          },
        ]
      : []),
  ];

  api.page(
    router,
    { method: 'get', path: CURRENT },
    platformOnly(async (ctx, op) => {
      const [operators, names] = await Promise.all([deps.operators.list(), tenantNames()]);
      const add = op.access.platformAdmin
        ? `<p><a class="button secondary" href="${CURRENT}/new">Add operator</a></p>\n`
        : '';
      consolePage(ctx, {
        title: 'Operators',
        current: CURRENT,
        user: op.user,
        body:
          add +
          table(ctx.query, CURRENT, columns(op, names), operators, {
            caption: 'Operators',
            empty: 'No operators yet. A platform administrator adds one here or with <code>iam operators add</code>.',
          }),
      });
    }),
  );

  /** The add form, `v` filled in; `error` (the service's sentence) next to its field. */
  const addForm = (
    ctx: Ctx,
    op: Operator,
    names: Map<string, string>,
    v: AddValues,
    error?: { field: 'email' | 'role' | 'tenant' | ''; message: string; status: number },
  ) => {
    const err = (f: string) =>
      error && error.field === f ? `<p id="${f}-error" class="error" role="alert">${esc(error.message)}</p>` : '';
    const invalid = (f: string) =>
      error && error.field === f ? ` aria-invalid="true" aria-describedby="${f}-error"` : '';
    const roles = OPERATOR_ROLES.map(
      (r) => `<option value="${r}"${v.role === r ? ' selected' : ''}>${esc(ROLE_WORDS[r])}</option>`,
    ).join('');
    const tenants = [...names]
      .sort(([, a], [, b]) => a.localeCompare(b))
      .map(
        ([id, name]) =>
          `<option value="${esc(id)}"${v.tenant === id ? ' selected' : ''}>${esc(name)} (${esc(id)})</option>`,
      )
      .join('');
    consolePage(ctx, {
      status: error?.status,
      title: 'Add operator',
      current: CURRENT,
      user: op.user,
      body: `<p>Gives a person an operator role. A new address becomes a user of the operators' directory, who
signs in to the console with an email code or a passkey. The role takes effect at their next click.</p>
${error && error.field === '' ? `<p class="error" role="alert">${esc(error.message)}</p>` : ''}
<form method="post" action="${CURRENT}/new">
${kit.csrfField(op)}
<label for="email">Email</label>
<input id="email" name="email" type="email" required maxlength="320" autocomplete="off"
  value="${esc(v.email)}"${invalid('email')}>
${err('email')}<label for="role">Role</label>
<select id="role" name="role" required${invalid('role')}>${roles}</select>
${err('role')}<label for="tenant">Tenant (a tenant administrator's only)</label>
<select id="tenant" name="tenant"${invalid('tenant')}><option value="">None: every tenant</option>${tenants}</select>
${err('tenant')}<button type="submit">Add operator</button>
</form>
<p><a href="${CURRENT}">Cancel</a></p>`,
    });
  };

  api.page(
    router,
    { method: 'get', path: `${CURRENT}/new` },
    platformOnly(async (ctx, op) => {
      addForm(ctx, op, await tenantNames(), { email: '', role: 'tenant-admin', tenant: '' });
    }),
  );

  api.page(
    router,
    { method: 'post', path: `${CURRENT}/new`, parser: 'form' },
    platformOnly(async (ctx, op) => {
      if (!(await kit.guard(ctx, op, null, { dangerous: true, current: CURRENT }))) return;
      const b = formOf(ctx);
      const v: AddValues = { email: field(b, 'email'), role: field(b, 'role'), tenant: field(b, 'tenant') };
      try {
        await deps.operators.add({ email: v.email, role: v.role, tenantId: v.tenant || undefined }, actorOf(op));
      } catch (e) {
        if (!(e instanceof ApiError) || e.status >= 500) throw e;
        // The service's refusal next to the field it names (`field`, or a validation's details).
        const named = [
          typeof e.extra.field === 'string' ? e.extra.field : '',
          ...((e.extra.details as { field?: string }[] | undefined) ?? []).map((d) => d.field ?? ''),
        ].join(' ');
        const f = /email/.test(named)
          ? 'email'
          : /role/.test(named)
            ? 'role'
            : /tenant/.test(named) || e.status === 404
              ? 'tenant'
              : '';
        return addForm(ctx, op, await tenantNames(), v, { field: f, message: e.message, status: e.status });
      }
      kit.done(ctx, CURRENT);
    }),
  );

  /** The operator role the path and query name, or undefined with the 404 page set. */
  const roleOf = async (ctx: Ctx, op: Operator, role: string, tenant: string) => {
    const found = (await deps.operators.list()).find(
      (o) => o.user_id === ctx.params.userId && o.role === role && (o.tenant_id ?? '') === tenant,
    );
    if (!found)
      kit.refuse(
        ctx,
        op,
        404,
        'Operator not found',
        'No such operator role: it may have been removed already.',
        CURRENT,
      );
    return found;
  };

  const removePath = `${CURRENT}/:userId/remove`;

  api.page(
    router,
    { method: 'get', path: removePath },
    platformOnly(async (ctx, op) => {
      const q = (k: string) => {
        const v = ctx.query[k];
        return typeof v === 'string' ? v : '';
      };
      const o = await roleOf(ctx, op, q('role'), q('tenant'));
      if (!o) return;
      const names = await tenantNames();
      const what = o.tenant_id
        ? `tenant administrator of ${esc(names.get(o.tenant_id) ?? o.tenant_id)} (<code>${esc(o.tenant_id)}</code>)`
        : `<code>${esc(o.role)}</code>`;
      const self = o.user_id === op.access.userId ? ' This is your own role: you lose it too.' : '';
      consolePage(ctx, {
        title: 'Remove operator',
        current: CURRENT,
        user: op.user,
        body: `<p>Take the role ${what} away from <strong>${esc(o.email)}</strong>. They lose it at their next click in
the console; their user and any other operator role they hold stay.${self}</p>
<form method="post" action="${esc(`${CURRENT}/${encodeURIComponent(o.user_id)}/remove`)}">
${kit.csrfField(op)}
<input type="hidden" name="role" value="${esc(o.role)}">
<input type="hidden" name="tenant" value="${esc(o.tenant_id ?? '')}">
<input type="hidden" name="email" value="${esc(o.email)}">
${confirmField(o.email, 'the address')}
<button type="submit">Remove operator</button>
</form>
<p><a href="${CURRENT}">Cancel</a></p>`,
      });
    }),
  );

  api.page(
    router,
    { method: 'post', path: removePath, parser: 'form' },
    platformOnly(async (ctx, op) => {
      const b = formOf(ctx);
      // The address typed must be the one the page showed (checked in constant time by the kit),
      // and that one the role's holder (below): so the address typed is the operator's.
      if (!(await kit.guard(ctx, op, null, { dangerous: true, confirm: field(b, 'email'), current: CURRENT }))) return;
      const o = await roleOf(ctx, op, field(b, 'role'), field(b, 'tenant'));
      if (!o) return;
      if (o.email !== field(b, 'email'))
        return kit.refuse(
          ctx,
          op,
          400,
          'Not confirmed',
          "What was typed is not the operator's address, so nothing was done.",
          CURRENT,
        );
      try {
        await deps.operators.remove({ email: o.email, role: o.role, tenantId: o.tenant_id ?? undefined }, actorOf(op));
      } catch (e) {
        // The last platform administrator (409 last_platform_admin): the service's own sentence.
        return kit.failed(ctx, op, e, 'Remove operator', CURRENT);
      }
      kit.done(ctx, CURRENT);
    }),
  );

  return router;
}
