/**
 * What the console's settings pages share (identity providers, custom claims, plugins, token
 * exchange, email; docs/console.md, "Pages"): the checks every handler makes first, in the
 * console's one order (kit.ts), so that no page of these sections can skip one:
 *
 * - `read`: the operator (else 303 to the sign-in or the 403 page), then the tenant visible to
 *   them (else 404), then the page;
 * - `write`: the same, then `kit.guard` (CSRF, a role that writes, step-up for a dangerous
 *   move) BEFORE the handler looks up any sub-resource, so an auditor's post is 403 whatever
 *   ids it names and another tenant's is 404.
 */
import type Router from '@koa/router';
import type { Tenant } from '../../../shared/db/entities.js';
import { ApiError } from '../../../shared/errors.js';
import { mayWrite } from '../../../shared/services/console/operators.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { consolePage, tenantTabs } from '../../views/console.js';
import { consoleKit, operatorOf, type ConsoleKit, type Ctx, type Operator } from './kit.js';

/** The navigation entry of every tenant page. */
export const CURRENT = '/console/tenants';

/** What the service found, or undefined where it answers 404 (unknown, or another tenant's). */
export async function found<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

export type TenantHandler = (ctx: Ctx, op: Operator, t: Tenant) => Promise<void> | void;

export interface SettingsPages {
  deps: AppDeps;
  api: ApiRegistry;
  router: Router<AppState>;
  kit: ConsoleKit;
  /** A GET handler: operator, then tenant, then `h`. */
  read(h: TenantHandler): (ctx: Ctx) => Promise<void>;
  /** A POST handler: operator, tenant, the form checks (`dangerous`: step-up), then `h`. */
  write(dangerous: boolean, h: TenantHandler): (ctx: Ctx) => Promise<void>;
  /** A tenant page: the section tabs, then `body`. */
  show(ctx: Ctx, op: Operator, t: Tenant, section: string, title: string, body: string, status?: number): void;
  /** Whether the operator may change the tenant (the links to forms are shown to writers only). */
  writes(op: Operator, t: Tenant): boolean;
  /** A sub-resource that is not the tenant's (or not at all): the 404 page. */
  missing(ctx: Ctx, op: Operator, what: string): void;
}

export function settingsPages(deps: AppDeps, api: ApiRegistry, router: Router<AppState>): SettingsPages {
  const kit = consoleKit(deps);
  const opened = async (ctx: Ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return undefined;
    const t = await kit.tenantOf(ctx, op);
    return t ? { op, t } : undefined;
  };
  return {
    deps,
    api,
    router,
    kit,
    read: (h) => async (ctx) => {
      const o = await opened(ctx);
      if (o) await h(ctx, o.op, o.t);
    },
    write: (dangerous, h) => async (ctx) => {
      const o = await opened(ctx);
      if (!o || !(await kit.guard(ctx, o.op, o.t.id, { dangerous, current: CURRENT }))) return;
      await h(ctx, o.op, o.t);
    },
    show(ctx, op, t, section, title, body, status) {
      consolePage(ctx, { status, title, current: CURRENT, user: op.user, body: `${tenantTabs(t, section)}\n${body}` });
    },
    writes: (op, t) => mayWrite(op.access, t.id),
    missing(ctx, op, what) {
      kit.refuse(ctx, op, 404, `${what} not found`, `No such ${what.toLowerCase()} in this tenant.`, CURRENT);
    },
  };
}
