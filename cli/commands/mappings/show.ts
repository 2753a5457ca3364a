import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { fields, table, time } from '../../format.js';

export default class MappingsShow extends BaseCommand<typeof MappingsShow> {
  static override summary = 'Show a field-mapping set and its mappings.';
  static override description = 'Names the set by id (fms_…) or by its setKey.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> edugain-idp --tenant ten_123',
    '<%= config.bin %> <%= command.id %> fms_abc --tenant ten_123 --json',
  ];
  static override args = { set: Args.string({ description: 'set id or setKey', required: true }) };
  static override flags = { tenant: tenantFlag };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const set = await this.services.fieldMapping.mappingSets.get(this.flags.tenant, this.args.set);
    this.log(
      fields([
        ['id', set.id],
        ['key', set.setKey],
        ['name', set.displayName],
        ['sourceType', set.sourceType],
        ['sourceProfile', set.sourceProfileId ?? '-'],
        ['lifecycleState', set.lifecycleState],
        ['updated', time(set.updatedAt)],
      ]),
    );
    this.log(
      table(
        set.mappings,
        [
          { header: 'source', value: (m) => m.source },
          { header: 'target', value: (m) => `${m.targetType}:${m.target}` },
          {
            header: 'flags',
            value: (m) => [m.required ? 'required' : '', m.multiValued ? 'multi' : ''].filter(Boolean).join(',') || '-',
          },
        ],
        'No mappings.',
      ),
    );
    return set;
  }
}
