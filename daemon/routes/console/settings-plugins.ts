/**
 * Plugins (docs/console.md, "Pages"; docs/plugins.md): every built-in plugin with its state for
 * the tenant, one plugin's detail and configuration, the configuration form, and enable/disable.
 * All through PluginService, the admin API's (daemon/routes/admin/plugins.ts), in the tenant's
 * scope (the platform-level setting is the CLI's and the API's).
 *
 * Secrets are never shown, not even the last four characters the API echoes: a secret field
 * reads "set" or "not set", its input is empty, and left empty it keeps its value. A tenant
 * relying on the platform's configuration sees none of it (as in the API). Changing the
 * configuration and enabling or disabling a plugin are dangerous moves (step-up): a plugin
 * sends the tenant's mail or audit events to a URL.
 */
import { ApiError } from '../../../shared/errors.js';
import type { PluginDetail } from '../../../shared/services/plugins/index.js';
import type { Tenant } from '../../../shared/db/entities.js';
import type { Column } from '../../views/console.js';
import { codes, describedBy, details, formError, tenantBase, when, yesNo } from '../../views/console-settings.js';
import { esc } from '../../views/html.js';
import { actorOf, formOf, type Ctx, type Operator } from './kit.js';
import { found, type SettingsPages } from './settings-kit.js';

const SECTION = '/plugins';

const columns = (base: string): Column<PluginDetail>[] => [
  {
    key: 'name',
    label: 'Name',
    cell: (p) => `<a href="${esc(`${base}/${encodeURIComponent(p.pluginId)}`)}">${esc(p.plugin.name)}</a>`,
    sort: (p) => p.plugin.name.toLowerCase(),
  },
  { key: 'category', label: 'Category', cell: (p) => esc(p.plugin.category), sort: (p) => p.plugin.category },
  { key: 'enabled', label: 'Enabled', cell: (p) => yesNo(p.enabled), sort: (p) => Number(p.enabled) },
  { key: 'source', label: 'Configured by', cell: (p) => esc(p.configSource), sort: (p) => p.configSource },
  {
    key: 'configured',
    label: 'Complete',
    cell: (p) => (p.configured ? 'yes' : `no: missing ${codes(p.missingRequiredFields)}`),
    sort: (p) => Number(p.configured),
  },
];

/** A plain config value as text (a string, a number; anything else as JSON). */
const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** A config value as a page may show it: a secret is "set" or "not set", never its text. */
const shown = (p: PluginDetail, name: string, secret: boolean) => {
  const v = p.config[name];
  if (v === undefined || v === null) return 'not set';
  return secret ? 'set' : esc(text(v));
};

/** The tenant's own configuration is shown; one it takes from the platform is not (as in the API). */
const ownConfig = (p: PluginDetail) => p.configSource !== 'platform';

const MOVES = {
  enable: {
    title: 'Enable plugin',
    happens: 'It starts working for this tenant at its next use (a plugin that needs setup starts it now).',
  },
  disable: {
    title: 'Disable plugin',
    happens: 'It stops working for this tenant at its next use; its configuration is kept.',
  },
} as const;

export function pluginPages(s: SettingsPages): void {
  const { api, router, deps, kit } = s;
  const path = `/console/tenants/:tenantId${SECTION}`;
  const pluginOf = (ctx: Ctx, t: Tenant) => found(deps.plugins.get(ctx.params.pluginId ?? '', t.id));
  const hereOf = (t: Tenant, p: PluginDetail) => `${tenantBase(t)}${SECTION}/${encodeURIComponent(p.pluginId)}`;

  s.list(
    SECTION,
    'Plugins',
    async (t) => (await deps.plugins.list(t.id)).plugins,
    columns,
    'This build ships no plugins.',
  );

  api.page(
    router,
    { method: 'get', path: `${path}/:pluginId` },
    s.read(async (ctx, op, t) => {
      const p = await pluginOf(ctx, t);
      if (!p) return s.missing(ctx, op, 'Plugin');
      const here = hereOf(t, p);
      const fields = ownConfig(p)
        ? `<table><caption class="sr-only">Configuration</caption>
<thead><tr><th scope="col">Field</th><th scope="col">Value</th><th scope="col">Required</th></tr></thead>
<tbody>${p.plugin.fields
            .map(
              (f) =>
                `<tr><td><code>${esc(f.name)}</code>${f.secret ? ' (secret)' : ''}</td>` +
                `<td>${shown(p, f.name, f.secret)}</td><td>${yesNo(f.required)}</td></tr>`,
            )
            .join('')}</tbody></table>`
        : '<p class="empty">This tenant uses the platform\'s configuration, which is not shown here. ' +
          'Configure the plugin for the tenant to give it its own.</p>';
      const prov = p.provisioning
        ? details([
            ['Setup', `${esc(p.provisioning.kind)}: ${esc(p.provisioning.state)}`],
            ...(p.provisioning.lastError
              ? ([['Last error', esc(p.provisioning.lastError)]] as [string, string][])
              : []),
            ['Updated', when(p.provisioning.updatedAt)],
          ])
        : '';
      const move = p.enabled ? 'disable' : 'enable';
      const links = s.writes(op, t)
        ? `<p><a class="button secondary" href="${esc(here)}/configure">Configure plugin…</a></p>
<p><a class="button secondary" href="${esc(here)}/${move}">${esc(MOVES[move].title)}…</a></p>`
        : '';
      const body = `<p>${esc(p.plugin.description)}</p>
${details([
  ['Id', `<code>${esc(p.pluginId)}</code>`],
  ['Enabled', yesNo(p.enabled)],
  ['Configured by', esc(p.configSource)],
  ['Complete', p.configured ? 'yes' : `no: missing ${codes(p.missingRequiredFields)}`],
])}
<h2>Configuration</h2>
${fields}${prov}${links}
<p><a href="${esc(tenantBase(t) + SECTION)}">All plugins</a></p>`;
      s.show(ctx, op, t, SECTION, p.plugin.name, body);
    }),
  );

  /** The form; after a refusal, `typed` (the post) refills the plain fields (never a secret's). */
  const configureForm = (
    ctx: Ctx,
    op: Operator,
    t: Tenant,
    p: PluginDetail,
    refusal?: { error: string; status: number; typed?: Record<string, unknown> },
  ) => {
    const error = refusal?.error;
    const here = hereOf(t, p);
    const own = ownConfig(p);
    const inputs = p.plugin.fields
      .map((f) => {
        const id = `f-${f.name}`;
        const label = `<label for="${esc(id)}">${esc(f.name)}${f.required ? '' : ' (optional)'}</label>`;
        if (f.secret) {
          const isSet = own && p.config[f.name] !== undefined;
          return `${label}
<input id="${esc(id)}" name="${esc(f.name)}" type="password" autocomplete="new-password"${describedBy(error)}>
<p class="hint">Now ${isSet ? 'set' : 'not set'}; left empty it keeps its value.</p>${
            isSet
              ? `\n<label for="${esc(id)}-remove"><input id="${esc(id)}-remove" name="remove" type="checkbox" ` +
                `value="${esc(f.name)}"> Remove the stored ${esc(f.name)}</label>`
              : ''
          }`;
        }
        const v = own ? p.config[f.name] : undefined;
        const typed = refusal?.typed?.[f.name];
        const value = typeof typed === 'string' ? typed : v === undefined || v === null ? '' : text(v);
        return `${label}
<input id="${esc(id)}" name="${esc(f.name)}" type="text" value="${esc(value)}" autocomplete="off"${describedBy(error)}>
<p class="hint">Left empty, the field is removed.</p>`;
      })
      .join('\n');
    const body = `<p>Configure <strong>${esc(p.plugin.name)}</strong> for this tenant. ${esc(p.plugin.description)}</p>
<form method="post" action="${esc(here)}/configure">
${kit.csrfField(op)}
${formError(error)}
${inputs}
<button type="submit">Save configuration</button>
</form>
<p><a href="${esc(here)}">Cancel</a></p>`;
    s.show(ctx, op, t, SECTION, `Configure ${p.plugin.name}`, body, refusal?.status);
  };

  api.page(
    router,
    { method: 'get', path: `${path}/:pluginId/configure` },
    s.read(async (ctx, op, t) => {
      const p = await pluginOf(ctx, t);
      if (!p) return s.missing(ctx, op, 'Plugin');
      configureForm(ctx, op, t, p);
    }),
  );

  api.page(
    router,
    { method: 'post', path: `${path}/:pluginId/configure`, parser: 'form' },
    s.write(true, async (ctx, op, t) => {
      const p = await pluginOf(ctx, t);
      if (!p) return s.missing(ctx, op, 'Plugin');
      const patch = configPatch(deps, p, formOf(ctx));
      if (!Object.keys(patch).length)
        return configureForm(ctx, op, t, p, { error: 'Nothing was changed.', status: 400 });
      try {
        await deps.plugins.configure(p.pluginId, t.id, patch, actorOf(op));
      } catch (e) {
        // The plugin's schema refused a field: the form again, with the service's sentence.
        if (e instanceof ApiError && e.status < 500)
          return configureForm(ctx, op, t, p, { error: e.message, status: e.status, typed: formOf(ctx) });
        throw e;
      }
      kit.done(ctx, hereOf(t, p));
    }),
  );

  for (const move of ['enable', 'disable'] as const) {
    const what = MOVES[move];
    api.page(
      router,
      { method: 'get', path: `${path}/:pluginId/${move}` },
      s.read(async (ctx, op, t) => {
        const p = await pluginOf(ctx, t);
        if (!p) return s.missing(ctx, op, 'Plugin');
        const here = hereOf(t, p);
        kit.confirm(ctx, op, t, {
          section: SECTION,
          title: what.title,
          intro: `${esc(what.title)} <strong>${esc(p.plugin.name)}</strong> for this tenant (now
${p.enabled ? 'enabled' : 'disabled'}). ${esc(what.happens)}`,
          action: `${here}/${move}`,
          button: what.title,
          back: here,
        });
      }),
    );

    api.page(
      router,
      { method: 'post', path: `${path}/:pluginId/${move}`, parser: 'form' },
      s.write(true, async (ctx, op, t) => {
        const p = await pluginOf(ctx, t);
        if (!p) return s.missing(ctx, op, 'Plugin');
        try {
          await deps.plugins[move](p.pluginId, t.id, actorOf(op));
        } catch (e) {
          // Incomplete configuration (422) or a platform that disabled it (403): the service's sentence.
          return kit.failed(ctx, op, e, what.title, '/console/tenants');
        }
        kit.done(ctx, hereOf(t, p));
      }),
    );
  }
}

/**
 * The form as the service's patch (PUT …/config's `config`): a secret typed in is set, a secret
 * ticked "remove" is removed (null), an empty secret is left out; a plain field that changed is
 * set, one emptied is removed. A form carries text only: a field whose schema wants a number
 * gets the number typed (the schema still decides whether it is acceptable).
 */
function configPatch(
  deps: SettingsPages['deps'],
  p: PluginDetail,
  b: Record<string, unknown>,
): Record<string, unknown> {
  const shape = deps.plugins.definition(p.pluginId).schema.shape as Record<
    string,
    { safeParse(v: unknown): { success: boolean; error?: { issues: { code: string }[] } } }
  >;
  const removed = new Set(([] as unknown[]).concat(b.remove ?? []).filter((x): x is string => typeof x === 'string'));
  const own = ownConfig(p);
  const patch: Record<string, unknown> = {};
  for (const f of p.plugin.fields) {
    const raw = typeof b[f.name] === 'string' ? (b[f.name] as string).trim() : '';
    const current = own ? p.config[f.name] : undefined;
    if (f.secret) {
      if (raw) patch[f.name] = raw;
      else if (removed.has(f.name) && current !== undefined) patch[f.name] = null;
      continue;
    }
    if (!raw) {
      if (current !== undefined) patch[f.name] = null;
      continue;
    }
    if (current !== undefined && text(current) === raw) continue;
    const asText = shape[f.name]?.safeParse(raw);
    const wantsNumber = asText && !asText.success && asText.error?.issues.some((i) => i.code === 'invalid_type');
    patch[f.name] = wantsNumber && /^-?\d+$/.test(raw) ? Number(raw) : raw;
  }
  return patch;
}
