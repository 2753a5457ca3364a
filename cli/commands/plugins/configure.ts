import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import type { PluginStateResult } from '../../../shared/services/plugins/index.js';
import { readStdin } from '../../http/prompt.js';
import { describeState, scopeFlags } from '../../plugins.js';

export default class PluginsConfigure extends BaseCommand<typeof PluginsConfigure> {
  static override summary = "Set fields of a plugin's config for the platform or a tenant.";
  static override description =
    'Fields given with --set key=value are validated by the plugin and stored; --unset removes one; fields not ' +
    'named keep their value, so a config can be filled in steps (required fields still missing are listed). ' +
    'A secret (signingSecret, bearerToken) is never given on the command line, where it would stay in the shell ' +
    'history and the process list: pipe it in with --secret-stdin <field>. Secrets are stored encrypted and shown ' +
    'only as their last four characters. See docs/plugins.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> audit-webhook --set url=https://siem.example.com/ingest',
    {
      description: 'The signing secret from a file, for one tenant',
      command:
        '<%= config.bin %> <%= command.id %> webhook-email --tenant ten_0123abcd --secret-stdin signingSecret ' +
        '< signing-secret.txt',
    },
    '<%= config.bin %> <%= command.id %> webhook-email --unset bearerToken --json',
  ];
  static override args = { id: Args.string({ description: 'plugin id', required: true }) };
  static override flags = {
    ...scopeFlags,
    set: Flags.string({ description: 'a field to set, key=value (numbers are taken as numbers)', multiple: true }),
    unset: Flags.string({ description: 'a field to remove', multiple: true }),
    'secret-stdin': Flags.string({ description: 'a secret field whose value is read from stdin' }),
  };

  async run(): Promise<PluginStateResult> {
    const config: Record<string, unknown> = {};
    for (const pair of this.flags.set ?? []) {
      const i = pair.indexOf('=');
      if (i <= 0) throw new CliFailure('invalid_request', `--set: expected key=value, got "${pair}"`);
      const value = pair.slice(i + 1);
      config[pair.slice(0, i)] = /^-?\d+$/.test(value) ? Number(value) : value;
    }
    for (const key of this.flags.unset ?? []) config[key] = null;
    const secretField = this.flags['secret-stdin'];
    if (secretField) {
      const value = await readStdin();
      if (!value) throw new CliFailure('invalid_request', `--secret-stdin ${secretField}: nothing was read from stdin`);
      config[secretField] = value;
    }
    if (!Object.keys(config).length)
      throw new CliFailure('invalid_request', 'nothing to change: give --set, --unset or --secret-stdin');
    if (this.flags.tenant) await this.requireTenant(this.flags.tenant);
    const state = await this.services.plugins.configure(this.args.id, this.flags.tenant ?? null, config, this.actor);
    this.log(describeState(state));
    return state;
  }
}
