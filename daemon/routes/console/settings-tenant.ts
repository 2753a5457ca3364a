/**
 * A tenant's own settings documents (docs/console.md, "Pages"): token exchange (RFC 8693, with
 * ID-JAG) and email routing (the notifier providers' order). Each page shows the settings in
 * force and has an edit form posting to the admin API's service (TokenExchangeSettingsService,
 * EmailSettingsService: daemon/routes/admin/token-exchange-settings.ts, email-settings.ts).
 *
 * Both edits are dangerous moves (step-up): email routing decides where the tenant's sign-in
 * codes and links go (docs/console.md names it), and token exchange settings decide which
 * outside issuers this service trusts to mint tokens for the tenant's users. A refusal by the
 * service re-renders the form with its sentence (400), nothing stored.
 */
import { ApiError } from '../../../shared/errors.js';
import { EMAIL_STRATEGIES } from '../../../shared/services/mail/types.js';
import { noteFor, type TokenExchangeSettings } from '../../../shared/services/token-exchange/settings.js';
import type { Tenant } from '../../../shared/db/entities.js';
import { table } from '../../views/console.js';
import {
  checkbox,
  codes,
  describedBy,
  details,
  formError,
  numberInput,
  tenantBase,
  yesNo,
} from '../../views/console-settings.js';
import { esc } from '../../views/html.js';
import { actorOf, field, formOf, type Ctx, type Operator } from './kit.js';
import type { SettingsPages } from './settings-kit.js';

const TX = '/token-exchange';
const EMAIL = '/email';

/** One entry per line, blank lines dropped. */
const lines = (raw: string) =>
  raw
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
/**
 * A whole number as typed, else the text (the service's schema names what is wrong with it);
 * left empty, the field is left out and keeps its value (the PUT's "fields left out keep their value").
 */
const whole = (raw: string): number | string | undefined =>
  !raw ? undefined : /^\d{1,9}$/.test(raw) ? Number(raw) : raw;
const on = (b: Record<string, unknown>, name: string) => b[name] === '1';

async function safely(run: () => Promise<unknown>, refused: (message: string, status: number) => Promise<void> | void) {
  try {
    await run();
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status < 500) {
      await refused(e.message, e.status);
      return false;
    }
    throw e;
  }
}

export function tenantSettingsPages(s: SettingsPages): void {
  const { api, router, deps, kit } = s;
  const base = '/console/tenants/:tenantId';

  // ---- token exchange ------------------------------------------------------------------

  api.page(
    router,
    { method: 'get', path: `${base}${TX}` },
    s.read(async (ctx, op, t) => {
      const x = await deps.tokenExchangeSettings.get(t.id);
      const link = s.writes(op, t)
        ? `<p><a class="button secondary" href="${esc(tenantBase(t) + TX)}/edit">Edit token exchange settings…</a></p>`
        : '';
      const body = `${details([
        ['Token exchange', x.enabled ? 'enabled' : 'disabled'],
        ['Subject token types', codes(x.allowedSubjectTokenTypes)],
        ['Most resource parameters', String(x.maxResourceParams)],
        ['Most audience parameters', String(x.maxAudienceParams)],
      ])}
<h2>ID-JAG</h2>
${details([
  ['ID-JAG', x.idJag.enabled ? 'enabled' : 'disabled'],
  ['Trusted issuers', codes(x.idJag.allowedIssuers)],
  ['Token lifetime cap', `${x.idJag.maxTokenLifetime} s`],
  ['Tenant claim', yesNo(x.idJag.includeTenantClaim)],
  ['Confidential clients only', yesNo(x.idJag.requireConfidentialClient)],
])}
<p class="hint">${esc(noteFor(t.id, x))}</p>${link}`;
      s.show(ctx, op, t, TX, 'Token exchange', body);
    }),
  );

  const txForm = (ctx: Ctx, op: Operator, t: Tenant, x: TokenExchangeSettings, error?: string, status?: number) => {
    const inv = describedBy(error);
    const body = `<form method="post" action="${esc(tenantBase(t) + TX)}/edit">
${kit.csrfField(op)}
${formError(error)}
${checkbox('enabled', 'Token exchange enabled (RFC 8693)', x.enabled)}
<label for="allowedSubjectTokenTypes">Subject token types (one per line)</label>
<textarea id="allowedSubjectTokenTypes" name="allowedSubjectTokenTypes" rows="3"${inv}>${esc(
      x.allowedSubjectTokenTypes.join('\n'),
    )}</textarea>
${numberInput('maxResourceParams', 'Most resource parameters (1 to 100)', x.maxResourceParams, inv)}
${numberInput('maxAudienceParams', 'Most audience parameters (1 to 100)', x.maxAudienceParams, inv)}
<h2>ID-JAG</h2>
${checkbox('idJagEnabled', 'ID-JAG subject tokens accepted', x.idJag.enabled)}
<label for="allowedIssuers">Trusted issuers (one https URL per line)</label>
<textarea id="allowedIssuers" name="allowedIssuers" rows="3"${inv}>${esc(x.idJag.allowedIssuers.join('\n'))}</textarea>
${numberInput('maxTokenLifetime', 'Token lifetime cap, seconds (1 to 3600)', x.idJag.maxTokenLifetime, inv)}
${checkbox('includeTenantClaim', 'Add a tenant claim to the tokens', x.idJag.includeTenantClaim)}
${checkbox('requireConfidentialClient', 'Confidential clients only', x.idJag.requireConfidentialClient)}
<button type="submit">Save token exchange settings</button>
</form>
<p><a href="${esc(tenantBase(t) + TX)}">Cancel</a></p>`;
    s.show(ctx, op, t, TX, 'Edit token exchange settings', body, status);
  };

  api.page(
    router,
    { method: 'get', path: `${base}${TX}/edit` },
    s.read(async (ctx, op, t) => txForm(ctx, op, t, await deps.tokenExchangeSettings.get(t.id))),
  );

  api.page(
    router,
    { method: 'post', path: `${base}${TX}/edit`, parser: 'form' },
    s.write(true, async (ctx, op, t) => {
      const b = formOf(ctx);
      const input = {
        enabled: on(b, 'enabled'),
        allowedSubjectTokenTypes: lines(field(b, 'allowedSubjectTokenTypes')),
        maxResourceParams: whole(field(b, 'maxResourceParams')),
        maxAudienceParams: whole(field(b, 'maxAudienceParams')),
        idJag: {
          enabled: on(b, 'idJagEnabled'),
          allowedIssuers: lines(field(b, 'allowedIssuers')),
          maxTokenLifetime: whole(field(b, 'maxTokenLifetime')),
          includeTenantClaim: on(b, 'includeTenantClaim'),
          requireConfidentialClient: on(b, 'requireConfidentialClient'),
        },
      };
      const saved = await safely(
        () => deps.tokenExchangeSettings.update(t.id, input, actorOf(op)),
        async (message, status) => txForm(ctx, op, t, await deps.tokenExchangeSettings.get(t.id), message, status),
      );
      if (!saved) return;
      kit.done(ctx, tenantBase(t) + TX);
    }),
  );

  // ---- email routing -------------------------------------------------------------------

  api.page(
    router,
    { method: 'get', path: `${base}${EMAIL}` },
    s.read(async (ctx, op, t) => {
      const r = await deps.emailSettings.get(t.id);
      const link = s.writes(op, t)
        ? `<p><a class="button secondary" href="${esc(tenantBase(t) + EMAIL)}/edit">Change email routing…</a></p>`
        : '';
      const providers = table(
        ctx.query,
        tenantBase(t) + EMAIL,
        [
          { key: 'id', label: 'Id', cell: (p) => `<code>${esc(p.id)}</code>`, sort: (p) => p.id },
          { key: 'name', label: 'Name', cell: (p) => esc(p.name), sort: (p) => p.name },
          {
            key: 'configured',
            label: 'Ready',
            cell: (p) => (p.configured ? 'yes' : `no: missing ${codes(p.missingRequiredFields)}`),
            sort: (p) => Number(p.configured),
          },
          { key: 'source', label: 'Configured by', cell: (p) => esc(p.configSource), sort: (p) => p.configSource },
          { key: 'from', label: 'Default sender', cell: (p) => esc(p.defaultFrom) },
        ],
        r.providers,
        { caption: 'Email providers', empty: 'No email provider is available to this tenant.' },
      );
      const body = `${details([
        [
          'Strategy',
          `<code>${esc(r.settings.strategy)}</code>: providers are tried in order, the first that accepts wins`,
        ],
        [
          'Provider order',
          `<ol>${r.settings.providerOrder.map((id) => `<li><code>${esc(id)}</code></li>`).join('')}</ol>`,
        ],
      ])}${link}
<h2>Providers</h2>
${providers}`;
      s.show(ctx, op, t, EMAIL, 'Email', body);
    }),
  );

  const emailForm = async (ctx: Ctx, op: Operator, t: Tenant, error?: string, status?: number, typed?: string) => {
    const r = await deps.emailSettings.get(t.id);
    const order = typed ?? r.settings.providerOrder.join('\n');
    const options = EMAIL_STRATEGIES.map(
      (x) => `<option value="${esc(x)}"${x === r.settings.strategy ? ' selected' : ''}>${esc(x)}</option>`,
    ).join('');
    const body = `<p>Where this tenant's mail (sign-in codes and links among it) is sent: providers are tried in this
order, and the first that accepts a message wins. A change applies to the next message sent.</p>
<form method="post" action="${esc(tenantBase(t) + EMAIL)}/edit">
${kit.csrfField(op)}
${formError(error)}
<label for="strategy">Strategy</label>
<select id="strategy" name="strategy">${options}</select>
<label for="providerOrder">Provider order (one provider id per line, first tried first)</label>
<textarea id="providerOrder" name="providerOrder" rows="4" required${describedBy(error)}>${esc(order)}</textarea>
<p class="hint">Available: ${codes(r.providers.map((p) => p.id))}.</p>
<button type="submit">Save email routing</button>
</form>
<p><a href="${esc(tenantBase(t) + EMAIL)}">Cancel</a></p>`;
    s.show(ctx, op, t, EMAIL, 'Change email routing', body, status);
  };

  api.page(
    router,
    { method: 'get', path: `${base}${EMAIL}/edit` },
    s.read((ctx, op, t) => emailForm(ctx, op, t)),
  );

  api.page(
    router,
    { method: 'post', path: `${base}${EMAIL}/edit`, parser: 'form' },
    s.write(true, async (ctx, op, t) => {
      const b = formOf(ctx);
      const typed = field(b, 'providerOrder');
      const input = { strategy: field(b, 'strategy'), providerOrder: lines(typed) };
      const saved = await safely(
        () => deps.emailSettings.update(t.id, input, actorOf(op)),
        (message, status) => emailForm(ctx, op, t, message, status, typed),
      );
      if (!saved) return;
      kit.done(ctx, tenantBase(t) + EMAIL);
    }),
  );
}
