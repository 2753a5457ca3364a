/**
 * "Send a sign-in link…" on a user's page in the console (docs/console.md, "Users"): a
 * confirmation page that says what the mail is, and a POST through kit.guard (404, CSRF, a
 * writer; not a dangerous move: it takes nothing away and the link holds no secret), then the
 * admin API's own call (InvitationService.invite, as POST …/users/{id}/invite), audited
 * `user.invite` with the operator's user id. A disabled user is the service's 409 in its own
 * sentence; success is 303 to the user's page, which says the mail is queued.
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { userPath } from '../../views/console-users.js';
import { esc } from '../../views/html.js';
import { actorOf, consoleKit, TENANTS } from './kit.js';
import { USER_ID, userOf } from './users-moves.js';

const TITLE = 'Send a sign-in link';

export function consoleUserInviteRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);
  const path = '/console/tenants/:tenantId/users/:userId/invite';

  api.page(
    router,
    { method: 'get', path },
    kit.read(async (ctx, op, t) => {
      const u = await userOf(deps, t.id, ctx.params.userId ?? '');
      if (!u) return kit.missing(ctx, op, 'User');
      const back = userPath(t.id, u.id);
      kit.confirm(ctx, op, t, {
        section: '/users',
        title: TITLE,
        alert: u.status === 'active' ? '' : 'This user is disabled and could not sign in: enable them first.',
        intro: `Send <strong>${esc(u.email)}</strong> (${esc(u.name)}, <code>${esc(u.id)}</code>) a mail with a link
to sign in to ${esc(t.name)}'s account page, the address filled in. The link holds no secret: they prove the
address with a code sent to it, or a passkey. Nothing on their account changes.`,
        action: `${back}/invite`,
        button: TITLE,
        back,
      });
    }),
  );

  // kit.write's checks come before the user is looked at: an auditor's post is 403 whatever id it names.
  api.page(
    router,
    { method: 'post', path, parser: 'form' },
    kit.write({}, async (ctx, op, t) => {
      const userId = ctx.params.userId ?? '';
      if (!USER_ID.test(userId)) return kit.missing(ctx, op, 'User');
      try {
        await deps.invitations.invite(t.id, userId, actorOf(op), { issuer: deps.config.issuer });
      } catch (e) {
        // Another tenant's user (404), a disabled one (409): the service's sentence.
        return kit.failed(ctx, op, e, TITLE, TENANTS);
      }
      kit.done(ctx, `${userPath(t.id, userId)}?invited=1`);
    }),
  );

  return router;
}
