import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import type { PluginStateResult } from '../../../shared/services/plugins/index.js';
import { describeState, incompleteFailure, scopeFlags } from '../../plugins.js';

export default class PluginsEnable extends BaseCommand<typeof PluginsEnable> {
  static override summary = 'Enable a plugin for the platform or a tenant.';
  static override description =
    'Enables the plugin once its required config fields are present; otherwise it fails and lists every missing ' +
    'one. A plugin that needs setup (audit-webhook: a signed verification delivery) shows its provisioning ' +
    'operation; `iam plugins list` shows how it went. Every daemon applies the change at its next use of the ' +
    'plugin. See docs/plugins.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> audit-webhook',
    '<%= config.bin %> <%= command.id %> webhook-email --tenant ten_0123abcd --json',
  ];
  static override args = { id: Args.string({ description: 'plugin id', required: true }) };
  static override flags = scopeFlags;

  async run(): Promise<PluginStateResult> {
    if (this.flags.tenant) await this.requireTenant(this.flags.tenant);
    let state: PluginStateResult;
    try {
      state = await this.services.plugins.enable(this.args.id, this.flags.tenant ?? null, this.actor);
    } catch (e) {
      throw incompleteFailure(e);
    }
    this.log(describeState(state));
    return state;
  }
}
