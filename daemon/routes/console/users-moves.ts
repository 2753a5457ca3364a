/**
 * A user's lifecycle moves in the console (docs/console.md, "Users"): disable, enable, sign out
 * everywhere and delete, each a confirmation page that says what will happen and a POST that is
 * a dangerous move (kit.ts: 404, CSRF, writer, step-up), then the admin API's own call
 * (UserLifecycleService, as POST …/users/{id}/disable|enable|sign-out and DELETE …/users/{id}),
 * audited with the operator's user id as the actor. Delete asks for the user's address typed,
 * as `iam users delete` does (compared in lower case, as the CLI compares it).
 */
import type Router from '@koa/router';
import type { UserDetail } from '../../../shared/services/users.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { userPath } from '../../views/console-users.js';
import { esc } from '../../views/html.js';
import { actorOf, confirmField, field, formOf, found, operatorOf, type ConsoleKit, type Ctx } from './kit.js';

/** What a user id looks like (the admin API's bound); anything else is an unknown user. */
export const USER_ID = /^[A-Za-z0-9_-]{1,40}$/;

const CURRENT = '/console/tenants';

type Move = 'disable' | 'enable' | 'sign-out' | 'delete';

const WHAT: Record<Move, { title: string; happens: string }> = {
  disable: {
    title: 'Disable user',
    happens:
      'They can no longer sign in by any method, and every session and token of theirs ends now. ' +
      'Nothing is deleted: enabling them lets them sign in again.',
  },
  enable: {
    title: 'Enable user',
    happens: 'They can sign in again. Sessions and tokens ended when they were disabled stay ended.',
  },
  'sign-out': {
    title: 'Sign out everywhere',
    happens:
      'Every session and refresh token of theirs ends now, and their access tokens stop being accepted. ' +
      'They stay active and may sign in again.',
  },
  delete: {
    title: 'Delete user',
    happens:
      'The profile and every record naming them are erased and every token revoked; the audit log keeps ' +
      'only their id and a pseudonym. This cannot be undone.',
  },
};

/** The user of the path in the tenant, or undefined (unknown, or another tenant's: alike). */
export async function userOf(deps: AppDeps, tenantId: string, userId: string): Promise<UserDetail | undefined> {
  if (!USER_ID.test(userId)) return undefined;
  return (await found(deps.userDirectory.get(tenantId, userId)))?.user;
}

export function consoleUserMoveRoutes(
  deps: AppDeps,
  api: ApiRegistry,
  router: Router<AppState>,
  kit: ConsoleKit,
): void {
  const notFound = (ctx: Ctx, op: Parameters<ConsoleKit['refuse']>[1]) =>
    kit.refuse(ctx, op, 404, 'User not found', 'No such user in this tenant.', CURRENT);

  for (const move of ['disable', 'enable', 'sign-out', 'delete'] as const) {
    const path = `/console/tenants/:tenantId/users/:userId/${move}`;
    const what = WHAT[move];

    api.page(
      router,
      { method: 'get', path },
      kit.read(async (ctx, op, t) => {
        const u = await userOf(deps, t.id, ctx.params.userId ?? '');
        if (!u) return notFound(ctx, op);
        const back = userPath(t.id, u.id);
        kit.confirm(ctx, op, t, {
          section: '/users',
          title: what.title,
          intro: `${esc(what.title)} <strong>${esc(u.email)}</strong> (${esc(u.name)}, <code>${esc(u.id)}</code>, now
${esc(u.status)}). ${esc(what.happens)}`,
          action: `${back}/${move}`,
          fields: move === 'delete' ? confirmField(u.email, "the user's email address") : undefined,
          button: what.title,
          back,
        });
      }),
    );

    api.page(router, { method: 'post', path, parser: 'form' }, async (ctx) => {
      const op = await operatorOf(deps, ctx);
      if (!op) return;
      const t = await kit.tenantOf(ctx, op);
      if (!t) return;
      const userId = ctx.params.userId ?? '';
      let confirm: string | undefined;
      if (move === 'delete') {
        // The address to type is the user's; read before the guard, but no answer depends on it
        // until the guard's checks have passed: an auditor is 403 whatever id the path names.
        // An unknown user has nothing to confirm, so is 404 after the guard, not 400.
        confirm = (await userOf(deps, t.id, userId))?.email;
        const b = formOf(ctx);
        // Addresses are compared in lower case, as `iam users delete` compares them.
        if (confirm !== undefined) b.confirm = field(b, 'confirm').toLowerCase();
      }
      if (!(await kit.guard(ctx, op, t.id, { dangerous: true, confirm, current: CURRENT }))) return;
      if (!USER_ID.test(userId) || (move === 'delete' && confirm === undefined)) return notFound(ctx, op);
      const s = deps.userLifecycle;
      const actor = actorOf(op);
      try {
        if (move === 'disable') await s.disable(t.id, userId, actor);
        else if (move === 'enable') await s.enable(t.id, userId, actor);
        else if (move === 'sign-out') await s.signOut(t.id, userId, actor);
        else await s.erase(t.id, userId, actor);
      } catch (e) {
        // Another tenant's user or one just erased: the service's 404, in its own sentence.
        return kit.failed(ctx, op, e, what.title, CURRENT);
      }
      kit.done(ctx, move === 'delete' ? userPath(t.id) : userPath(t.id, userId));
    });
  }
}
