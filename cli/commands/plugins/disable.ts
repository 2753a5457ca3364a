import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import type { PluginStateResult } from '../../../shared/services/plugins/index.js';
import { describeState, incompleteFailure, scopeFlags } from '../../plugins.js';

export default class PluginsDisable extends BaseCommand<typeof PluginsDisable> {
  static override summary = 'Disable a plugin for the platform or a tenant.';
  static override description =
    'Disables the plugin; for a tenant this overrides the platform-level setting. ' +
    'Every daemon applies the change at its next use of the plugin. See docs/plugins.md.';
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
      state = await this.services.plugins.disable(this.args.id, this.flags.tenant ?? null, this.actor);
    } catch (e) {
      throw incompleteFailure(e);
    }
    this.log(describeState(state));
    return state;
  }
}
