/**
 * What every console page and form shares (docs/console.md): who the operator is, the tenant a
 * page is about (404 for one the operator may not see), and the checks of a form post in their
 * one order:
 *
 * 1. the tenant visible to the operator, else 404 (never 403: another tenant's id answers like
 *    an unknown one, as the admin API does);
 * 2. the CSRF token, bound to the session (daemon/csrf.ts), else 403;
 * 3. a role that writes (an auditor changes nothing), else 403;
 * 4. for a dangerous move, a sign-in within the last five minutes (the account page's
 *    STEP_UP_MAX_AGE_MS; NIST SP 800-63B §4.1.3 re-authentication), else 403 with "Sign in
 *    again" (`prompt=login`);
 * 5. where the CLI asks for a typed confirmation, the same text typed in the form's `confirm`
 *    field (compared in constant time), else 400 and nothing done.
 *
 * Then the move is the service's, audited with the operator's user id (`actor`). A refusal by
 * the service (an ApiError under 500) is shown in the service's own sentence (`failed`).
 */
import type { ParameterizedContext } from 'koa';
import { sameText } from '../../../shared/crypto.js';
import type { Tenant } from '../../../shared/db/entities.js';
import { ApiError } from '../../../shared/errors.js';
import type { Actor } from '../../../shared/services/audit.js';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import { STEP_UP_MAX_AGE_MS } from '../../../shared/services/auth/passkey-contract.js';
import type { FoundSession } from '../../../shared/services/auth/sessions.js';
import { mayRead, mayWrite, seesAll, type OperatorAccess } from '../../../shared/services/console/operators.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie } from '../../cookies.js';
import { sessionCsrf } from '../../csrf.js';
import { consolePage, notOperatorPage, tenantTabs, type ConsoleUser } from '../../views/console.js';
import { esc } from '../../views/html.js';

export type Ctx = ParameterizedContext<AppState, { params: Record<string, string> }>;

/** The purpose the console's CSRF tokens are derived for (not the account page's). */
export const CONSOLE_CSRF_PURPOSE = 'console-csrf';

export interface Operator {
  found: FoundSession;
  access: OperatorAccess;
  user: ConsoleUser;
}

const roleWords = (a: OperatorAccess) =>
  a.platformAdmin
    ? 'platform administrator'
    : a.auditor
      ? 'auditor'
      : `tenant administrator of ${a.tenants.length} tenant${a.tenants.length === 1 ? '' : 's'}`;

/** The signed-in operator, or undefined when the answer (303 or 403) is already set. */
export async function operatorOf(deps: AppDeps, ctx: ParameterizedContext<AppState>): Promise<Operator | undefined> {
  const found = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
  if (!found) {
    ctx.status = 303;
    ctx.redirect('/console/sign-in');
    return undefined;
  }
  const access = await deps.operators.access(found.session.tenant_id, found.user.id);
  if (!access) {
    notOperatorPage(ctx, found.user.email);
    return undefined;
  }
  return { found, access, user: { email: found.user.email, role: roleWords(access) } };
}

/** The operator as the audit log's actor. */
export const actorOf = (op: Operator): Actor => ({ type: 'user', id: op.access.userId });

/** The form field that carries the CSRF token of the operator's session. */
export type CsrfField = (op: Operator) => string;

export interface GuardOptions {
  /** A dangerous move: needs a sign-in within the last five minutes (step-up). */
  dangerous?: boolean;
  /** The text the operator must type in the `confirm` field (where the CLI asks for one). */
  confirm?: string;
  /** The navigation entry the refusal page marks as current. */
  current: string;
}

export interface ConsoleKit {
  csrfField: CsrfField;
  /** A console page whose body is one alert sentence (`html` is trusted markup). */
  refuse(ctx: Ctx, op: Operator, status: number, title: string, html: string, current: string): void;
  /**
   * The tenant of `ctx.params.tenantId`, or undefined with the 404 page set: one the operator
   * may not see, an unknown id and the platform tenant alike.
   */
  tenantOf(ctx: Ctx, op: Operator, current?: string): Promise<Tenant | undefined>;
  /**
   * A form post's checks 2 to 5 (the caller did 1 with tenantOf). True when the move may go on;
   * false with the refusal page set. Throttles form posts by address first. `tenantId` null is
   * a move of the platform's own (create a tenant, add an operator): a platform administrator's
   * alone. Call it before looking up anything under the tenant, so that an auditor's post is 403
   * whatever ids it names.
   */
  guard(ctx: Ctx, op: Operator, tenantId: string | null, opts: GuardOptions): Promise<boolean>;
  /**
   * A page of the platform's own (operators): every operator who sees every tenant reads it; a
   * tenant administrator gets the 404 page (false is returned after setting it).
   */
  platformPage(ctx: Ctx, op: Operator, current: string): boolean;
  /** A service refusal (ApiError < 500) as a page in its own words; anything else rethrown. */
  failed(ctx: Ctx, op: Operator, e: unknown, title: string, current: string): void;
  /** A tenant page's GET handler: the operator, then the tenant (404), then `h`. */
  read: (h: TenantHandler) => (ctx: Ctx) => Promise<void>;
  /**
   * A tenant form's POST handler: the operator, the tenant (404), the form's checks (`guard`,
   * before any sub-resource is looked up), then `h`. `confirm` names the text to type, from the
   * request (the path's ids), where the CLI asks for one.
   */
  write: (opts: WriteOptions, h: TenantHandler) => (ctx: Ctx) => Promise<void>;
  /** A tenant page: the section tabs, then `body`. */
  show: (ctx: Ctx, op: Operator, t: Tenant, section: string, title: string, body: string, status?: number) => void;
  /**
   * A confirmation page that says what will happen: `intro` (trusted markup), a form posting to
   * `action` with the CSRF token, `fields` (trusted markup: inputs, a typed confirmation), the
   * `button`, and Cancel back to `back`.
   */
  confirm: (ctx: Ctx, op: Operator, t: Tenant, page: ConfirmPage) => void;
  /** A sub-resource that is not the tenant's (or not at all): the 404 page. */
  missing: (ctx: Ctx, op: Operator, what: string) => void;
  /** A move done: 303 to `location` (RFC 9110 §15.4.4). */
  done: (ctx: Ctx, location: string) => void;
}

/** The navigation entry of every tenant page. */
export const TENANTS = '/console/tenants';

export type TenantHandler = (ctx: Ctx, op: Operator, t: Tenant) => Promise<void> | void;

export interface WriteOptions {
  dangerous?: boolean;
  /** The text the operator must type, from the request. */
  confirm?: (ctx: Ctx) => string;
  /** A move of the platform's own on this tenant (create, retry, offboard): platform administrators'. */
  platform?: boolean;
}

export interface ConfirmPage {
  section: string;
  title: string;
  /** Said first, as an alert (trusted markup): why the move would be refused now. */
  alert?: string;
  intro: string;
  action: string;
  fields?: string;
  button: string;
  back: string;
}

/** What the service found, or undefined where it answers 404 (unknown, or another tenant's). */
export async function found<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

/** Inputs of a typed confirmation: what to type, shown in the label. */
export const confirmField = (expected: string, what: string) =>
  `<label for="confirm">Type ${esc(what)} <code>${esc(expected)}</code> to confirm</label>
<input id="confirm" name="confirm" type="text" required autocomplete="off" spellcheck="false">`;

/** The form body as a record (a form post's parsed fields). */
export const formOf = (ctx: Ctx) => (ctx.request.body ?? {}) as Record<string, unknown>;
/** One trimmed text field of the form, '' when absent. */
export const field = (b: Record<string, unknown>, name: string) => (typeof b[name] === 'string' ? b[name].trim() : '');

export function consoleKit(deps: AppDeps): ConsoleKit {
  const csrf = sessionCsrf(deps.config.secretKey, CONSOLE_CSRF_PURPOSE);
  const refuse: ConsoleKit['refuse'] = (ctx, op, status, title, html, current) =>
    consolePage(ctx, { status, title, current, user: op.user, body: `<p role="alert">${html}</p>` });
  const opened = async (ctx: Ctx) => {
    const op = await operatorOf(deps, ctx);
    if (!op) return undefined;
    const t = await kit.tenantOf(ctx, op);
    return t ? { op, t } : undefined;
  };
  const kit: ConsoleKit = {
    csrfField: (op) => `<input type="hidden" name="csrf" value="${esc(csrf.tokenFor(op.found.session.id))}">`,
    refuse,
    async tenantOf(ctx, op, current = '/console/tenants') {
      const id = ctx.params.tenantId ?? '';
      // Only the service's 404 reads as no tenant: a database failure stays a 500. An operator's
      // session is of the platform tenant (OperatorService.access answers for no other), so its
      // tenant id is the platform tenant's without reading it again; compared with the stored id,
      // not the path's (a case-insensitive collation finds the row under another spelling).
      const t = mayRead(op.access, id) ? await found(deps.directory.requireTenant(id)) : undefined;
      if (!t || t.id === op.found.session.tenant_id) {
        refuse(ctx, op, 404, 'Tenant not found', 'No such tenant among those you administer.', current);
        return undefined;
      }
      return t;
    },
    async guard(ctx, op, tenantId, opts) {
      await deps.throttle.formPost(ctx.ip);
      const b = formOf(ctx);
      if (!csrf.verify(op.found.session.id, b.csrf)) {
        refuse(ctx, op, 403, 'Form expired', 'This form has expired: reload the page and try again.', opts.current);
        return false;
      }
      if (!(tenantId === null ? op.access.platformAdmin : mayWrite(op.access, tenantId))) {
        refuse(ctx, op, 403, 'Read only', 'Your operator role reads; it changes nothing.', opts.current);
        return false;
      }
      if (opts.dangerous && !(Date.now() - op.found.session.auth_time <= STEP_UP_MAX_AGE_MS)) {
        refuse(
          ctx,
          op,
          403,
          'Sign in again',
          `This move needs a sign-in within the last ${STEP_UP_MAX_AGE_MS / 60_000} minutes. ` +
            '<a href="/console/sign-in?fresh=1">Sign in again</a>, then repeat it.',
          opts.current,
        );
        return false;
      }
      if (opts.confirm !== undefined && !sameText(field(b, 'confirm'), opts.confirm)) {
        refuse(
          ctx,
          op,
          400,
          'Not confirmed',
          'What was typed does not match, so nothing was done. Go back and type it exactly.',
          opts.current,
        );
        return false;
      }
      return true;
    },
    platformPage(ctx, op, current) {
      if (seesAll(op.access)) return true;
      refuse(ctx, op, 404, 'Not found', 'No such page among those you administer.', current);
      return false;
    },
    read: (h) => async (ctx) => {
      const o = await opened(ctx);
      if (o) await h(ctx, o.op, o.t);
    },
    write: (w, h) => async (ctx) => {
      const o = await opened(ctx);
      if (!o) return;
      const opts = { dangerous: w.dangerous, confirm: w.confirm?.(ctx), current: TENANTS };
      if (!(await kit.guard(ctx, o.op, w.platform ? null : o.t.id, opts))) return;
      await h(ctx, o.op, o.t);
    },
    show(ctx, op, t, section, title, body, status) {
      consolePage(ctx, { status, title, current: TENANTS, user: op.user, body: `${tenantTabs(t, section)}\n${body}` });
    },
    confirm(ctx, op, t, p) {
      kit.show(
        ctx,
        op,
        t,
        p.section,
        p.title,
        `${p.alert ? `<p role="alert">${p.alert}</p>\n` : ''}<p>${p.intro}</p>
<form method="post" action="${esc(p.action)}">
${kit.csrfField(op)}
${p.fields ? `${p.fields}\n` : ''}<button type="submit">${esc(p.button)}</button>
</form>
<p><a href="${esc(p.back)}">Cancel</a></p>`,
      );
    },
    missing(ctx, op, what) {
      refuse(ctx, op, 404, `${what} not found`, `No such ${what.toLowerCase()} in this tenant.`, TENANTS);
    },
    done(ctx, location) {
      ctx.status = 303; // RFC 9110 §15.4.4
      ctx.redirect(location);
    },
    failed(ctx, op, e, title, current) {
      if (e instanceof ApiError && e.status < 500) return refuse(ctx, op, e.status, title, esc(e.message), current);
      throw e;
    },
  };
  return kit;
}
