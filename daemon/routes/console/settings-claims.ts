/**
 * Custom claims (docs/console.md, "Pages"; docs/claims.md): the tenant's claim schemas, one
 * schema's detail with its latest rename's progress (copied of affected, the phase, an error
 * code), and the rename form. The rename is CustomClaimsService's and ClaimRenameService's, the
 * admin API's (daemon/routes/admin/custom-claims.ts, custom-claim-rename.ts): a small one ends
 * within the request, a larger one runs in the job; either way the answer is 303 to the detail,
 * which shows where it is (reload to follow it: the console has no script). A rename is not a
 * dangerous move (nothing is lost: the values are copied, then the key switches in one
 * transaction), so it needs no step-up.
 */
import type { CustomClaimSchema } from '../../../shared/services/custom-claims.js';
import type { RenameResult } from '../../../shared/services/claim-rename.js';
import { ApiError } from '../../../shared/errors.js';
import type { Column } from '../../views/console.js';
import { codes, describedBy, details, formError, tenantBase, when, yesNo } from '../../views/console-settings.js';
import { esc } from '../../views/html.js';
import { actorOf, field, formOf, type Ctx, type Operator } from './kit.js';
import { found, type SettingsPages } from './settings-kit.js';
import type { Tenant } from '../../../shared/db/entities.js';

const SECTION = '/claims';

const columns = (base: string): Column<CustomClaimSchema>[] => [
  {
    key: 'key',
    label: 'Key',
    cell: (c) => `<a href="${esc(`${base}/${encodeURIComponent(c.id)}`)}"><code>${esc(c.field_key)}</code></a>`,
    sort: (c) => c.field_key,
  },
  { key: 'label', label: 'Label', cell: (c) => esc(c.display_label), sort: (c) => c.display_label.toLowerCase() },
  {
    key: 'type',
    label: 'Type',
    cell: (c) => `${esc(c.field_type)} (${esc(c.cardinality)})`,
    sort: (c) => c.field_type,
  },
  {
    key: 'state',
    label: 'State',
    cell: (c) =>
      `${c.is_active ? 'active' : 'inactive'}${c.operation_status === 'active' ? '' : `, ${esc(c.operation_status)}`}`,
    sort: (c) => `${c.is_active}${c.operation_status}`,
  },
  { key: 'system', label: 'System', cell: (c) => yesNo(c.is_system), sort: (c) => c.is_system },
];

const EMPTY =
  'No custom claims yet. Define one with <code>iam claims create --tenant … --key department --label Department ' +
  '--type string --bind id_token:profile</code>.';

const ENDED = new Set(['completed', 'failed']);

/** A rename's progress, in words and figures. */
function renameProgress(r: RenameResult | undefined): string {
  if (!r) return '<p class="empty">Never renamed.</p>';
  const o = r.operation;
  const running = !ENDED.has(o.state);
  return (
    details([
      ['From', `<code>${esc(o.old_key)}</code>`],
      ['To', `<code>${esc(o.new_key)}</code>`],
      ['Phase', esc(o.state)],
      ['Values copied', `${o.copied_count} of ${o.affected_users}`],
      ['Old values removed', String(o.deleted_count)],
      ...(o.error_code ? ([['Error', `<code>${esc(o.error_code)}</code>`]] as [string, string][]) : []),
      ['Started', when(o.created_at)],
      ['Completed', when(o.completed_at)],
    ]) +
    (running
      ? `<p role="status"><progress max="${o.affected_users || 1}" value="${o.copied_count}" ` +
        `aria-label="Values copied">${o.copied_count} of ${o.affected_users}</progress> ` +
        'Under way: reload this page to follow it.</p>'
      : '')
  );
}

export function claimPages(s: SettingsPages): void {
  const { api, router, deps, kit } = s;
  const path = `/console/tenants/:tenantId${SECTION}`;

  s.list(SECTION, 'Custom claims', (t) => deps.customClaims.listSchemas(t.id), columns, EMPTY);

  api.page(
    router,
    { method: 'get', path: `${path}/:claimId` },
    s.read(async (ctx, op, t) => {
      const c = await found(deps.customClaims.getSchema(t.id, ctx.params.claimId ?? ''));
      if (!c) return s.missing(ctx, op, 'Custom claim');
      const rename = await found(deps.claimRename.status(t.id, c.id));
      const here = `${tenantBase(t)}${SECTION}/${encodeURIComponent(c.id)}`;
      const bindings = c.field_usage_bindings.map((b) => {
        const scopes = Array.isArray(b.scopes) ? (b.scopes as string[]) : [];
        return `${esc(String(b.token_type))}${scopes.length ? ` (scopes ${codes(scopes)})` : ''}`;
      });
      const link =
        s.writes(op, t) && !c.is_system
          ? `<p><a class="button secondary" href="${esc(here)}/rename">Rename claim…</a></p>`
          : '';
      const body = `${details([
        ['Id', `<code>${esc(c.id)}</code>`],
        ['Key', `<code>${esc(c.field_key)}</code>`],
        ['Type', `${esc(c.field_type)} (${esc(c.cardinality)})`],
        ['Active', yesNo(c.is_active)],
        ['State', esc(c.operation_status)],
        ['Personal data', yesNo(c.is_pii)],
        ['Required', yesNo(c.is_required)],
        ['System', yesNo(c.is_system)],
        ['In tokens', bindings.length ? bindings.join('; ') : 'none'],
        ['Updated', when(c.updated_at)],
      ])}${link}
<h2>Latest rename</h2>
${renameProgress(rename)}
<p><a href="${esc(tenantBase(t) + SECTION)}">All custom claims</a></p>`;
      s.show(ctx, op, t, SECTION, c.display_label, body);
    }),
  );

  const renameForm = (ctx: Ctx, op: Operator, t: Tenant, c: CustomClaimSchema, error?: string, status?: number) => {
    const here = `${tenantBase(t)}${SECTION}/${encodeURIComponent(c.id)}`;
    const body = `<p>Rename <code>${esc(c.field_key)}</code>: every stored value is copied to the new key, then the key
switches in one step. Tokens carry the new key from then on: relying parties that read the old one must change too.</p>
<form method="post" action="${esc(here)}/rename">
${kit.csrfField(op)}
${formError(error)}
<label for="new_field_key">New key</label>
<input id="new_field_key" name="new_field_key" type="text" required maxlength="64" autocomplete="off"
 spellcheck="false" pattern="[a-z][a-z0-9_]{0,63}"${describedBy(error)}>
<p class="hint">A lower-case letter, then lower-case letters, digits or underscores.</p>
<button type="submit">Rename claim</button>
</form>
<p><a href="${esc(here)}">Cancel</a></p>`;
    s.show(ctx, op, t, SECTION, `Rename ${c.field_key}`, body, status);
  };

  api.page(
    router,
    { method: 'get', path: `${path}/:claimId/rename` },
    s.read(async (ctx, op, t) => {
      const c = await found(deps.customClaims.getSchema(t.id, ctx.params.claimId ?? ''));
      if (!c) return s.missing(ctx, op, 'Custom claim');
      renameForm(ctx, op, t, c);
    }),
  );

  api.page(
    router,
    { method: 'post', path: `${path}/:claimId/rename`, parser: 'form' },
    s.write(false, async (ctx, op, t) => {
      const c = await found(deps.customClaims.getSchema(t.id, ctx.params.claimId ?? ''));
      if (!c) return s.missing(ctx, op, 'Custom claim');
      try {
        await deps.claimRename.start(t.id, c.id, { new_field_key: field(formOf(ctx), 'new_field_key') }, actorOf(op));
      } catch (e) {
        // A key refused (pattern, reserved, taken) or a rename already running: the form again, with why.
        if (e instanceof ApiError && e.status < 500 && e.status !== 404)
          return renameForm(ctx, op, t, c, e.message, e.status);
        return kit.failed(ctx, op, e, 'Rename claim', '/console/tenants');
      }
      kit.done(ctx, `${tenantBase(t)}${SECTION}/${encodeURIComponent(c.id)}`);
    }),
  );
}
