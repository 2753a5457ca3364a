/**
 * What the console's settings pages share (identity providers, custom claims, plugins, token
 * exchange, email; docs/console.md, "Pages"): the kit's handlers (kit.ts), which make the checks
 * in the console's one order, so that no page of these sections can skip one:
 *
 * - `read`: the operator (else 303 to the sign-in or the 403 page), then the tenant visible to
 *   them (else 404), then the page;
 * - `write`: the same, then `kit.guard` (CSRF, a role that writes, step-up for a dangerous
 *   move) BEFORE the handler looks up any sub-resource, so an auditor's post is 403 whatever
 *   ids it names and another tenant's is 404.
 */
import type Router from '@koa/router';
import type { Tenant } from '../../../shared/db/entities.js';
import { mayWrite } from '../../../shared/services/console/operators.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { table, type Column } from '../../views/console.js';
import { tenantBase } from '../../views/console-settings.js';
import { consoleKit, found, TENANTS, type ConsoleKit, type Ctx, type Operator, type TenantHandler } from './kit.js';

/** The navigation entry of every tenant page. */
export const CURRENT = TENANTS;

export { found };

export interface SettingsPages extends Pick<ConsoleKit, 'read' | 'show' | 'missing'> {
  deps: AppDeps;
  api: ApiRegistry;
  router: Router<AppState>;
  kit: ConsoleKit;
  /** A POST handler: operator, tenant, the form checks (`dangerous`: step-up), then `h`. */
  write(dangerous: boolean, h: TenantHandler): (ctx: Ctx) => Promise<void>;
  /** Whether the operator may change the tenant (the links to forms are shown to writers only). */
  writes(op: Operator, t: Tenant): boolean;
  /**
   * A section's list page, GET /console/tenants/:tenantId<section>: the tenant's `rows` in the
   * console's table (sort, paging), captioned `title`, with `empty` (trusted markup) when none.
   */
  list<T>(
    section: string,
    title: string,
    rows: (t: Tenant) => Promise<T[]>,
    columns: (base: string) => Column<T>[],
    empty: string,
  ): void;
}

export function settingsPages(deps: AppDeps, api: ApiRegistry, router: Router<AppState>): SettingsPages {
  const kit = consoleKit(deps);
  const list: SettingsPages['list'] = (section, title, rows, columns, empty) =>
    api.page(
      router,
      { method: 'get', path: `/console/tenants/:tenantId${section}` },
      kit.read(async (ctx, op, t) => {
        const base = `${tenantBase(t)}${section}`;
        const body = table(ctx.query, base, columns(base), await rows(t), { caption: title, empty });
        kit.show(ctx, op, t, section, title, body);
      }),
    );
  return {
    deps,
    api,
    router,
    kit,
    read: kit.read,
    write: (dangerous, h) => kit.write({ dangerous }, h),
    show: kit.show,
    missing: kit.missing,
    writes: (op, t) => mayWrite(op.access, t.id),
    list,
  };
}
