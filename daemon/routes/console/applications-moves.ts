/**
 * An application's dangerous moves in the console (docs/console.md, "Applications"): rotate its
 * secret, disable, enable, delete. Each is a confirmation form saying what will happen (GET) and
 * a post checked in the console's order (kit.ts: 404, CSRF, writer, step-up, and for delete the
 * client_id typed, as `iam clients delete` asks) before the application is looked up, then the
 * admin API's own ClientLifecycleService call (daemon/routes/admin/clients.ts), audited with
 * the operator's user id. A rotation answers 200 with the new secret, shown this once.
 */
import Router from '@koa/router';
import { DEFAULT_OLD_SECRET_EXPIRES_IN_S } from '../../../shared/schemas/clients.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { appPath, secretOnce } from '../../views/console-apps.js';
import { esc } from '../../views/html.js';
import { appOf, CURRENT } from './applications.js';
import { actorOf, confirmField, consoleKit, field, formOf } from './kit.js';

type Move = 'rotate-secret' | 'disable' | 'enable' | 'delete';

const WHAT: Record<Move, { title: string; happens: string }> = {
  'rotate-secret': {
    title: 'Rotate secret',
    happens:
      'A new secret is made and shown once. The secrets it has now keep working for the time chosen below, ' +
      'so its configuration can be changed first; "At once" stops them now.',
  },
  disable: {
    title: 'Disable application',
    happens:
      'It can no longer authenticate or get tokens (invalid_client), and its access tokens, refresh tokens ' +
      'and codes end at once. Enabling it again does not bring those tokens back.',
  },
  enable: {
    title: 'Enable application',
    happens: 'Its credentials work again; the tokens ended when it was disabled stay ended.',
  },
  delete: {
    title: 'Delete application',
    happens:
      'It is deleted for good with its secrets, codes, refresh tokens and the consents given to it; its ' +
      'access tokens stop at once. This cannot be undone.',
  },
};

/** How long the secrets live before a rotation keep working (seconds), the API's default selected. */
const OVERLAPS: [number, string][] = [
  [0, 'At once'],
  [3600, 'One hour'],
  [86_400, 'One day'],
  [7 * 86_400, 'Seven days'],
  [30 * 86_400, 'Thirty days'],
];

export function consoleApplicationMoveRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);

  for (const move of ['rotate-secret', 'disable', 'enable', 'delete'] as const) {
    const path = `/console/tenants/:tenantId/applications/:clientId/${move}`;
    const what = WHAT[move];

    api.page(
      router,
      { method: 'get', path },
      kit.read(async (ctx, op, t) => {
        const app = await appOf(deps, kit, ctx, op, t);
        if (!app) return;
        const c = app.client;
        const back = appPath(t.id, c.client_id);
        const extra =
          move === 'rotate-secret'
            ? `<label for="old_secret_expires_in">The secrets it has now keep working</label>
<select id="old_secret_expires_in" name="old_secret_expires_in">${OVERLAPS.map(
                ([s, label]) =>
                  `<option value="${s}"${s === DEFAULT_OLD_SECRET_EXPIRES_IN_S ? ' selected' : ''}>${label}</option>`,
              ).join('')}</select>\n`
            : move === 'delete'
              ? `${confirmField(c.client_id, 'the client_id')}\n`
              : '';
        kit.confirm(ctx, op, t, {
          section: '/applications',
          title: what.title,
          intro:
            `<strong>${esc(c.name)}</strong> (<code>${esc(c.client_id)}</code>, now ${esc(c.status)}): ` +
            esc(what.happens),
          action: `${back}/${move}`,
          fields: extra.trimEnd(),
          button: what.title,
          back,
        });
      }),
    );

    // The typed client_id is the one the form posts to (its action names the client_id).
    const confirm =
      move === 'delete' ? (ctx: { params: Record<string, string> }) => ctx.params.clientId ?? '' : undefined;
    api.page(
      router,
      { method: 'post', path, parser: 'form' },
      kit.write({ dangerous: true, confirm }, async (ctx, op, t) => {
        const app = await appOf(deps, kit, ctx, op, t);
        if (!app) return;
        const ref = app.client.client_id;
        const actor = actorOf(op);
        try {
          if (move === 'rotate-secret') {
            const overlap = Number(field(formOf(ctx), 'old_secret_expires_in') || DEFAULT_OLD_SECRET_EXPIRES_IN_S);
            const s = await deps.clientLifecycle.addSecret(t.id, ref, { old_secret_expires_in: overlap }, actor);
            const old =
              s.old_secrets_expire_at === null
                ? 'It had no other live secret.'
                : s.old_secrets_expire_at <= Date.now()
                  ? 'The secrets it had stopped working now.'
                  : `The secrets it had keep working until ${new Date(s.old_secrets_expire_at).toISOString()}.`;
            // 200, not 303: the secret is shown on this answer alone.
            return kit.show(
              ctx,
              op,
              t,
              '/applications',
              'Secret rotated',
              `${secretOnce(s.client_secret, `${app.client.name} has a new secret (${s.id}). ${old}`)}
<p><a href="${esc(appPath(t.id, ref))}">Open the application</a></p>`,
            );
          }
          if (move === 'delete') await deps.clientLifecycle.delete(t.id, ref, actor);
          else if (move === 'disable') await deps.clientLifecycle.disable(t.id, ref, actor);
          else await deps.clientLifecycle.enable(t.id, ref, actor);
        } catch (e) {
          // Not a client with a secret, an overlap out of bounds: the service's own sentence.
          return kit.failed(ctx, op, e, what.title, CURRENT);
        }
        // A deleted application's page is gone: its list.
        kit.done(ctx, move === 'delete' ? appPath(t.id) : appPath(t.id, ref));
      }),
    );
  }
  return router;
}
