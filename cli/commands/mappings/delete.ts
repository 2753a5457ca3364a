import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';

export default class MappingsDelete extends BaseCommand<typeof MappingsDelete> {
  static override summary = 'Delete a field-mapping set that no federation trust source names.';
  static override description =
    'A set that a trust source names (idpFieldMappingSetId or spFieldMappingSetId) is not deleted: the command ' +
    'fails with mapping_set_in_use and lists those sources; change them first (`iam federation update`).';
  static override examples = ['<%= config.bin %> <%= command.id %> old-set --tenant ten_123'];
  static override args = { set: Args.string({ description: 'set id or setKey', required: true }) };
  static override flags = { tenant: tenantFlag };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const set = await this.services.fieldMapping.mappingSets.get(this.flags.tenant, this.args.set);
    await this.services.fieldMapping.mappingSets.delete(this.flags.tenant, set.id, this.actor);
    this.log(`Deleted field-mapping set ${set.id} (${set.setKey}).`);
    return { id: set.id, setKey: set.setKey, deleted: true };
  }
}
