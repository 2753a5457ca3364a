/**
 * A tenant's users in the console (docs/console.md, "Users"): the list with its search, a
 * user's detail page, and the create form; the lifecycle moves are in users-moves.ts.
 *
 * - GET …/users: the directory's search the admin API's GET /api/admin/tenants/{id}/users uses
 *   (UserDirectoryService.list): `q` finds addresses or names starting with it (two searches,
 *   email_prefix and name_prefix, merged), sorted and paged by the console's table.
 * - GET …/users/:userId: the admin API's user (profile, status, last sign-in, linked upstream
 *   identities, custom claim values), and beside it what the account page and the admin API
 *   read for that user: live sessions and their devices, passkeys, consents, sign-in history.
 * - GET/POST …/users/new: DirectoryService.createUser, as POST /api/admin/tenants/{id}/users,
 *   with the operator as the audited actor; a refusal is shown next to its field (status 400,
 *   409 for an address taken). With "Send a sign-in link by email" checked, then
 *   InvitationService.invite, as POST …/users/{id}/invite (users-invite.ts has the user page's move).
 */
import Router from '@koa/router';
import type { Tenant } from '../../../shared/db/entities.js';
import { ApiError } from '../../../shared/errors.js';
import { USER_PAGE_MAX } from '../../../shared/schemas/users.js';
import { mayWrite } from '../../../shared/services/console/operators.js';
import type { UserListItem } from '../../../shared/services/users.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { table } from '../../views/console.js';
import {
  claimsPanel,
  consentsPanel,
  createForm,
  devicesPanel,
  passkeysPanel,
  profilePanel,
  searchForm,
  signInsPanel,
  upstreamPanel,
  userColumns,
  userPath,
} from '../../views/console-users.js';
import { esc } from '../../views/html.js';
import { actorOf, consoleKit, field, formOf, type ConsoleKit, type Ctx, type Operator } from './kit.js';
import { consoleUserMoveRoutes, USER_ID } from './users-moves.js';

const CURRENT = '/console/tenants';
const SECTION = '/users';
/** The longest search (the admin API's name_prefix bound). */
const SEARCH_MAX = 200;
/** Live sessions and sign-ins shown on a user's page, newest first. */
const DEVICES_SHOWN = 100;
const SIGN_INS_SHOWN = 20;

/** Users whose address or name starts with `q` (all when empty), and whether there are more than shown. */
async function search(deps: AppDeps, tenantId: string, q: string): Promise<{ users: UserListItem[]; more: boolean }> {
  const limit = USER_PAGE_MAX;
  if (!q) {
    const page = await deps.userDirectory.list(tenantId, { limit });
    return { users: page.users, more: page.next_cursor !== undefined };
  }
  const byEmail = await deps.userDirectory.list(tenantId, { email_prefix: q, limit });
  const byName = await deps.userDirectory.list(tenantId, { name_prefix: q, limit });
  const seen = new Map(byEmail.users.map((u) => [u.id, u]));
  for (const u of byName.users) seen.set(u.id, u);
  return {
    users: [...seen.values()].sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id)),
    more: byEmail.next_cursor !== undefined || byName.next_cursor !== undefined,
  };
}

/** The service's refusal of a create as messages by field (the error object's details or field). */
function problemsOf(e: ApiError): Record<string, string> {
  const out: Record<string, string> = {};
  const details = e.extra.details;
  if (Array.isArray(details))
    for (const d of details as { field?: unknown; message?: unknown }[])
      if (typeof d.field === 'string' && typeof d.message === 'string') out[d.field] ??= d.message;
  if (typeof e.extra.field === 'string') out[e.extra.field] = e.message;
  if (!Object.keys(out).length) out[''] = e.message;
  return out;
}

export function consoleUserRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);
  const base = '/console/tenants/:tenantId/users';

  api.page(
    router,
    { method: 'get', path: base },
    kit.read(async (ctx, op, t) => {
      const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
      const list = userPath(t.id);
      const create = mayWrite(op.access, t.id)
        ? `<p><a class="button" href="${esc(list)}/new">Create user</a></p>`
        : '';
      const page = (status: number, body: string) =>
        kit.show(ctx, op, t, SECTION, `Users of ${t.name}`, `${create}\n${body}`, status);
      if (q.length > SEARCH_MAX) return page(400, searchForm(t.id, q, `Search for at most ${SEARCH_MAX} characters.`));
      const { users, more } = await search(deps, t.id, q);
      const empty = q
        ? `No user's address or name starts with <strong>${esc(q)}</strong>. Search for the start of an address ` +
          `or a name, or <a href="${esc(list)}">show every user</a>.`
        : `No users yet. Create one with "Create user", import them with <code>iam users import</code>, or ` +
          'let them sign up if the tenant allows it.';
      const note = more
        ? `<p class="hint">Showing the first ${USER_PAGE_MAX} matches, oldest first: search to narrow them.</p>`
        : '';
      const tableBase = q ? `${list}?${new URLSearchParams({ q })}` : list;
      const rows = table(ctx.query, tableBase, userColumns(t.id), users, { caption: 'Users', empty });
      page(200, `${searchForm(t.id, q)}\n${note}\n${rows}`);
    }),
  );

  const renderCreate = (
    ctx: Ctx,
    op: Operator,
    t: Tenant,
    status: number,
    values: { email: string; name: string; invite?: boolean } = { email: '', name: '' },
    problems: Record<string, string> = {},
  ) =>
    kit.show(
      ctx,
      op,
      t,
      SECTION,
      'Create user',
      createForm(`${userPath(t.id)}/new`, kit.csrfField(op), values, problems, userPath(t.id)),
      status,
    );

  // Registered before …/:userId, which would otherwise take "new" for an id.
  api.page(
    router,
    { method: 'get', path: `${base}/new` },
    kit.read((ctx, op, t) => renderCreate(ctx, op, t, 200)),
  );

  api.page(
    router,
    { method: 'post', path: `${base}/new`, parser: 'form' },
    kit.write({}, async (ctx, op, t) => {
      const b = formOf(ctx);
      const values = { email: field(b, 'email'), name: field(b, 'name') };
      const invite = field(b, 'invite') === '1';
      let id: string;
      try {
        id = (await deps.directory.createUser(t.id, values, actorOf(op))).id;
      } catch (e) {
        // Inline validation: the service's own sentence next to the field it names.
        if (e instanceof ApiError && e.status < 500)
          return renderCreate(ctx, op, t, e.status, { ...values, invite }, problemsOf(e));
        throw e;
      }
      // Create, then invite (the admin API's two calls, in that order): the user exists either way.
      if (invite && !(await inviteAfterCreate(deps, kit, ctx, op, t.id, id))) return;
      kit.done(ctx, invite ? `${userPath(t.id, id)}?invited=1` : userPath(t.id, id));
    }),
  );

  api.page(
    router,
    { method: 'get', path: `${base}/:userId` },
    kit.read((ctx, op, t) => detail(deps, kit, ctx, op, t)),
  );

  consoleUserMoveRoutes(deps, api, router, kit);
  return router;
}

/**
 * The invitation of a user just created (InvitationService.invite, as POST …/users/{id}/invite).
 * A refusal says the user was created all the same, with the service's sentence and a link to
 * the user's page (where "Send a sign-in link…" can try again).
 */
async function inviteAfterCreate(
  deps: AppDeps,
  kit: ConsoleKit,
  ctx: Ctx,
  op: Operator,
  tenantId: string,
  userId: string,
): Promise<boolean> {
  try {
    await deps.invitations.invite(tenantId, userId, actorOf(op), { issuer: deps.config.issuer });
    return true;
  } catch (e) {
    if (!(e instanceof ApiError && e.status < 500)) throw e;
    const html =
      `The user was created, but no sign-in link was sent: ${esc(e.message)} ` +
      `<a href="${esc(userPath(tenantId, userId))}">Open the user</a>.`;
    kit.refuse(ctx, op, e.status, 'User created, not invited', html, CURRENT);
    return false;
  }
}

/** A user's page: each panel from the service that holds it. Another tenant's user is 404. */
async function detail(deps: AppDeps, kit: ConsoleKit, ctx: Ctx, op: Operator, t: Tenant) {
  const userId = ctx.params.userId ?? '';
  let u;
  try {
    if (!USER_ID.test(userId)) throw new ApiError(404, 'not_found', `User ${userId} was not found.`);
    u = (await deps.userDirectory.get(t.id, userId)).user;
  } catch (e) {
    return kit.failed(ctx, op, e, 'User not found', CURRENT);
  }
  const devices = await deps.account.deviceDetails(t.id, u.id, '', DEVICES_SHOWN);
  const passkeys = await deps.passkeys.listForOperator(t.id, u.id);
  const consents = await deps.account.listConsents(t.id, u.id);
  const { sign_ins: signIns } = await deps.signIns.list(t.id, { userId: u.id, limit: SIGN_INS_SHOWN });
  const further =
    `<p class="hint">The ${SIGN_INS_SHOWN} latest; ` +
    `<code>iam sign-ins list --tenant ${esc(t.id)} --user ${esc(u.id)}</code> pages further.</p>`;
  const here = userPath(t.id, u.id);
  // After an invitation (303 here with ?invited=1): the mail is in the outbox, not yet delivered.
  const invited =
    ctx.query.invited === '1'
      ? `<p role="status">A sign-in link to ${esc(u.email)} is queued; the outbox delivers it.</p>\n`
      : '';
  const link = (move: string, text: string) => `<a class="button secondary" href="${esc(here)}/${move}">${text}</a>`;
  // A disabled user could not sign in: no invitation is offered until they are enabled.
  const status =
    u.status === 'disabled'
      ? link('enable', 'Enable user…')
      : `${link('invite', 'Send a sign-in link…')}\n${link('disable', 'Disable user…')}`;
  const moves = mayWrite(op.access, t.id)
    ? `<h2>Actions</h2>
${status}
${link('sign-out', 'Sign out everywhere…')}
${link('delete', 'Delete user…')}`
    : '';
  kit.show(
    ctx,
    op,
    t,
    SECTION,
    u.name || u.email,
    `<p><a href="${esc(userPath(t.id))}">All users</a></p>
${invited}<h2>Profile</h2>
${profilePanel(u)}
<h2>Sessions and devices</h2>
${devicesPanel(devices)}
<h2>Passkeys</h2>
${passkeysPanel(passkeys)}
<h2>Consents</h2>
${consentsPanel(consents)}
<h2>Linked upstream identities</h2>
${upstreamPanel(u.upstream_identities)}
<h2>Custom claim values</h2>
${claimsPanel(u.claims)}
<h2>Sign-in history</h2>
${signInsPanel(signIns)}
${signIns.length === SIGN_INS_SHOWN ? further : ''}
${moves}`,
  );
}
