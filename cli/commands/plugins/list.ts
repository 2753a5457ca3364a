import { BaseCommand } from '../../base.js';
import { list, table } from '../../format.js';
import type { PluginDetail } from '../../../shared/services/plugins/index.js';
import { scopeFlags } from '../../plugins.js';

export default class PluginsList extends BaseCommand<typeof PluginsList> {
  static override summary = 'List the built-in platform plugins and their state for the platform or a tenant.';
  static override description =
    'Shows each plugin (webhook-email, audit-webhook), its config fields (required ones marked *, secret ones ' +
    'marked (secret)), and its state: enabled, where its config comes from (tenant, platform or none), and the ' +
    'required fields still missing. Secrets are never shown in full. See docs/plugins.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json',
  ];
  static override flags = scopeFlags;

  async run(): Promise<{ tenantId: string | null; plugins: PluginDetail[] }> {
    if (this.flags.tenant) await this.requireTenant(this.flags.tenant);
    const result = await this.services.plugins.list(this.flags.tenant ?? null);
    this.log(
      table(
        result.plugins,
        [
          { header: 'id', value: (p) => p.pluginId },
          { header: 'enabled', value: (p) => (p.enabled ? 'yes' : 'no') },
          { header: 'config', value: (p) => p.configSource },
          { header: 'missing', value: (p) => list(p.missingRequiredFields) },
          { header: 'provisioning', value: (p) => (p.provisioning ? p.provisioning.state : '-') },
          {
            header: 'fields',
            value: (p) =>
              p.plugin.fields.map((f) => `${f.name}${f.required ? '*' : ''}${f.secret ? ' (secret)' : ''}`).join(', '),
          },
        ],
        'No plugins.',
      ),
    );
    return result;
  }
}
