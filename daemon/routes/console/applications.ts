/**
 * A tenant's applications (OAuth clients) in the console (docs/console.md, "Applications"): the
 * list, registration, the detail and the edit form. Each move is the admin API's own service
 * call (daemon/routes/admin/directory.ts registers with DirectoryService.createClient,
 * daemon/routes/admin/clients.ts edits with ClientLifecycleService.update), audited with the
 * operator's user id. The registration's refusals (CreateClientInput, the redirect URI rules of
 * RFC 6749 §3.1.2 and RFC 8252 §7) come back as the service's field details and are shown beside
 * their fields, the form re-rendered with what was typed (400). The dangerous moves (rotate,
 * disable, enable, delete) are in applications-moves.ts.
 */
import Router from '@koa/router';
import type { Tenant } from '../../../shared/db/entities.js';
import { ApiError, type FieldIssue } from '../../../shared/errors.js';
import { SCOPE_PLATFORM } from '../../../shared/scopes.js';
import { mayWrite } from '../../../shared/services/console/operators.js';
import type { ClientPublic } from '../../../shared/services/directory.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import {
  appColumns,
  appDetail,
  appForm,
  appPath,
  hasSecret,
  NO_APPS,
  secretOnce,
  valuesOf,
  type AppErrors,
  type AppField,
  type AppFormValues,
} from '../../views/console-apps.js';
import { table } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { actorOf, consoleKit, field, formOf, found, type ConsoleKit, type Ctx, type Operator } from './kit.js';

export const CURRENT = '/console/tenants';
const SECTION = '/applications';
/** At most this many applications are listed (the repository's page limit; the admin API pages further). */
const APP_LIST_MAX = 1000;

/**
 * The application `ctx.params.clientId` names (its client_id, or its id `cli_…`) in tenant `t`,
 * or undefined with the 404 page set: another tenant's application answers like an unknown one.
 */
export async function appOf(
  deps: AppDeps,
  kit: ConsoleKit,
  ctx: Ctx,
  op: Operator,
  t: Tenant,
): Promise<{ client: ClientPublic; etag: string } | undefined> {
  const app = await found(deps.clientLifecycle.get(t.id, ctx.params.clientId ?? ''));
  if (!app)
    kit.refuse(
      ctx,
      op,
      404,
      'Application not found',
      `No such application in this tenant. <a href="${esc(appPath(t.id))}">Back to the applications</a>.`,
      CURRENT,
    );
  return app;
}

/** A text field as typed (lines kept), '' when absent. */
const raw = (b: Record<string, unknown>, k: string) => (typeof b[k] === 'string' ? b[k] : '');
/** One entry per non-empty line. */
const linesOf = (s: string) =>
  s
    .split(/\r?\n/)
    .map((x) => x.trim())
    .filter(Boolean);
const wordsOf = (s: string) => s.split(/\s+/).filter(Boolean);
/** A repeated field (checkboxes) as a list of strings. */
const many = (v: unknown) => (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x) => typeof x === 'string');

/** The form as typed, over `base` (the stored registration, for a field the post left out). */
function typed(b: Record<string, unknown>, base: AppFormValues): AppFormValues {
  const has = (k: string) => typeof b[k] === 'string';
  return {
    client_name: has('client_name') ? field(b, 'client_name') : base.client_name,
    type: field(b, 'type') === 'public' ? 'public' : base.type,
    redirect_uris: has('redirect_uris') ? raw(b, 'redirect_uris') : base.redirect_uris,
    allowed_origins: has('allowed_origins') ? raw(b, 'allowed_origins') : base.allowed_origins,
    grant_types: many(b.grant_types),
    scopes: has('scopes') ? raw(b, 'scopes') : base.scopes,
    logo_uri: has('logo_uri') ? field(b, 'logo_uri') : base.logo_uri,
  };
}

/** The registration field a refusal names (`redirect_uris.1` → redirect_uris), as the form's field. */
const FORM_FIELD: Record<string, AppField> = {
  name: 'client_name',
  public: 'type',
  require_pkce: 'type',
  token_endpoint_auth_method: 'type',
  redirect_uris: 'redirect_uris',
  allowed_origins: 'allowed_origins',
  grant_types: 'grant_types',
  scopes: 'scopes',
  logo_uri: 'logo_uri',
};

/** The service's 400 as messages beside their fields (the first for each), the rest above the form. */
export function errorsOf(e: ApiError): AppErrors {
  const details = (e.extra.details as FieldIssue[] | undefined) ?? [];
  const out: AppErrors = {};
  for (const d of details) {
    const f = FORM_FIELD[d.field.split('.')[0]] ?? 'form';
    out[f] ??= d.message;
  }
  out.form ??= details.length ? 'Nothing was saved: correct what is marked below.' : e.message;
  return out;
}

/**
 * Only a platform administrator may give an application the platform scope: the admin API's
 * rule for a tenant administrator's token (docs/scopes.md), here for a tenant administrator.
 */
const platformScopeRefused = (op: Operator, scopes: string[] | undefined) =>
  !!scopes?.includes(SCOPE_PLATFORM) && !op.access.platformAdmin;
const PLATFORM_SCOPE = `Only a platform administrator may give the ${SCOPE_PLATFORM} scope.`;

const EMPTY: AppFormValues = {
  client_name: '',
  type: 'confidential',
  redirect_uris: '',
  allowed_origins: '',
  grant_types: ['authorization_code', 'refresh_token'],
  scopes: '',
  logo_uri: '',
};

export function consoleApplicationRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);
  const list = '/console/tenants/:tenantId/applications';
  const show = (ctx: Ctx, op: Operator, t: Tenant, title: string, body: string, status?: number) =>
    kit.show(ctx, op, t, SECTION, title, body, status);

  api.page(
    router,
    { method: 'get', path: list },
    kit.read(async (ctx, op, t) => {
      const apps = await deps.directory.scope(t.id).clients.list({ limit: APP_LIST_MAX });
      const create = mayWrite(op.access, t.id)
        ? `<p><a class="button" href="${esc(appPath(t.id))}/new">Create application</a></p>\n`
        : '';
      const rows = table(ctx.query, appPath(t.id), appColumns(t.id), apps, { caption: 'Applications', empty: NO_APPS });
      show(ctx, op, t, 'Applications', `${create}${rows}`);
    }),
  );

  const createForm = (ctx: Ctx, op: Operator, t: Tenant, values: AppFormValues, errors: AppErrors, status = 200) =>
    show(
      ctx,
      op,
      t,
      'Create application',
      appForm({ tenantId: t.id, csrfField: kit.csrfField(op), values, errors }),
      status,
    );

  api.page(
    router,
    { method: 'get', path: `${list}/new` },
    kit.read((ctx, op, t) => createForm(ctx, op, t, EMPTY, {})),
  );

  api.page(
    router,
    { method: 'post', path: `${list}/new`, parser: 'form' },
    kit.write({}, async (ctx, op, t) => {
      const b = formOf(ctx);
      const v = typed(b, { ...EMPTY, grant_types: [] });
      const type = field(b, 'type');
      if (type !== 'confidential' && type !== 'public')
        return createForm(ctx, op, t, v, { type: 'Choose confidential or public.' }, 400);
      const scopes = wordsOf(v.scopes);
      if (platformScopeRefused(op, scopes)) return createForm(ctx, op, t, v, { scopes: PLATFORM_SCOPE }, 403);
      const origins = linesOf(v.allowed_origins);
      const input = {
        name: v.client_name,
        public: type === 'public',
        redirect_uris: linesOf(v.redirect_uris),
        ...(origins.length ? { allowed_origins: origins } : {}),
        // None checked, no scope typed: the registration's defaults (docs/console.md).
        ...(v.grant_types.length ? { grant_types: v.grant_types } : {}),
        ...(scopes.length ? { scopes } : {}),
      };
      let made: Awaited<ReturnType<AppDeps['directory']['createClient']>>;
      try {
        made = await deps.directory.createClient(t.id, input, actorOf(op));
      } catch (e) {
        if (e instanceof ApiError && e.status === 400) return createForm(ctx, op, t, v, errorsOf(e), 400);
        return kit.failed(ctx, op, e, 'Create application', CURRENT);
      }
      const { client, client_secret } = made;
      // 200, not 303: the secret is shown on this answer alone (it is stored only as a hash).
      const said = client_secret
        ? secretOnce(client_secret, `${client.name} was created. Its client_id is ${client.client_id}.`)
        : `<p role="status">${esc(client.name)} was created with client_id <code>${esc(client.client_id)}</code>. ` +
          'A public application has no secret.</p>';
      show(
        ctx,
        op,
        t,
        'Application created',
        `${said}\n<p><a href="${esc(appPath(t.id, client.client_id))}">Open the application</a></p>`,
      );
    }),
  );

  api.page(
    router,
    { method: 'get', path: `${list}/:clientId` },
    kit.read(async (ctx, op, t) => {
      const app = await appOf(deps, kit, ctx, op, t);
      if (!app) return;
      const secrets = hasSecret(app.client) ? await deps.clientLifecycle.listSecrets(t.id, app.client.client_id) : [];
      show(ctx, op, t, app.client.name, appDetail(t.id, app.client, secrets, mayWrite(op.access, t.id)));
    }),
  );

  const editForm = (
    ctx: Ctx,
    op: Operator,
    t: Tenant,
    app: { client: ClientPublic; etag: string },
    values: AppFormValues,
    errors: AppErrors,
    status = 200,
  ) =>
    show(
      ctx,
      op,
      t,
      `Edit ${app.client.name}`,
      appForm({ tenantId: t.id, csrfField: kit.csrfField(op), values, errors, client: app.client, etag: app.etag }),
      status,
    );

  api.page(
    router,
    { method: 'get', path: `${list}/:clientId/edit` },
    kit.read(async (ctx, op, t) => {
      const app = await appOf(deps, kit, ctx, op, t);
      if (app) editForm(ctx, op, t, app, valuesOf(app.client), {});
    }),
  );

  api.page(
    router,
    { method: 'post', path: `${list}/:clientId/edit`, parser: 'form' },
    kit.write({}, async (ctx, op, t) => {
      const app = await appOf(deps, kit, ctx, op, t);
      if (!app) return;
      const b = formOf(ctx);
      const v = typed(b, valuesOf(app.client));
      const has = (k: string) => typeof b[k] === 'string';
      // A field the post left out stays as it is; an empty one is emptied (as PATCH, docs/directory.md).
      const patch = {
        ...(has('client_name') ? { name: v.client_name } : {}),
        ...(has('redirect_uris') ? { redirect_uris: linesOf(v.redirect_uris) } : {}),
        ...(has('allowed_origins') ? { allowed_origins: linesOf(v.allowed_origins) } : {}),
        ...(has('scopes') ? { scopes: wordsOf(v.scopes) } : {}),
        ...(has('logo_uri') ? { logo_uri: v.logo_uri || null } : {}),
        grant_types: v.grant_types,
      };
      // Unchecking every box would leave an application that can get no token at all: say so
      // rather than save it (disabling is the move that stops an application).
      if (!v.grant_types.length)
        return editForm(ctx, op, t, app, v, { grant_types: 'Check at least one grant type.' }, 400);
      if (platformScopeRefused(op, patch.scopes)) return editForm(ctx, op, t, app, v, { scopes: PLATFORM_SCOPE }, 403);
      const etag = field(b, 'etag');
      try {
        // The ETag the form was drawn from, compared in the write transaction (RFC 9110 §13.1.1).
        await deps.clientLifecycle.update(
          t.id,
          app.client.client_id,
          patch,
          actorOf(op),
          etag ? { ifMatch: etag } : {},
        );
      } catch (e) {
        if (e instanceof ApiError && e.status === 400) return editForm(ctx, op, t, app, v, errorsOf(e), 400);
        if (e instanceof ApiError && e.status === 412)
          return kit.refuse(
            ctx,
            op,
            412,
            'Changed meanwhile',
            'Someone changed this application after the form was opened, so nothing was saved. ' +
              `<a href="${esc(appPath(t.id, app.client.client_id))}/edit">Open the form again</a> to see the change.`,
            CURRENT,
          );
        return kit.failed(ctx, op, e, 'Edit application', CURRENT);
      }
      kit.done(ctx, appPath(t.id, app.client.client_id));
    }),
  );

  return router;
}
