import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag, trustSourceLines } from '../../federation.js';

export default class FederationShow extends BaseCommand<typeof FederationShow> {
  static override summary = 'Show a federation trust source.';
  static override description =
    "Names the source by id (fts_…) or sourceKey. Shows its configuration and the metadata poller's state; " +
    '--json prints the record as the admin API returns it.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> edugain --tenant ten_123',
    '<%= config.bin %> <%= command.id %> fts_abc --tenant ten_123 --json',
  ];
  static override args = { source: Args.string({ description: 'source id or sourceKey', required: true }) };
  static override flags = { tenant: tenantFlag };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const source = await this.services.fieldMapping.trustSources.get(this.flags.tenant, this.args.source);
    this.log(trustSourceLines(source));
    return source;
  }
}
