import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { table, time } from '../../format.js';

export default class MappingsList extends BaseCommand<typeof MappingsList> {
  static override summary = "List a tenant's field-mapping sets.";
  static override description =
    "A field-mapping set maps a source's attributes (SAML attribute names, SCIM paths, CSV columns, directory " +
    'attributes) to user fields and custom claims; federation trust sources name them. Oldest first. See ' +
    'docs/federation.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --json | jq -r '.[].id'",
  ];
  static override flags = {
    tenant: tenantFlag,
    limit: Flags.integer({ description: 'most sets to list', default: 100, min: 1, max: 500 }),
    offset: Flags.integer({ description: 'sets to skip', default: 0, min: 0 }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const sets = await this.services.fieldMapping.mappingSets.list(
      this.flags.tenant,
      this.flags.limit,
      this.flags.offset,
    );
    this.log(
      table(
        sets,
        [
          { header: 'id', value: (s) => s.id },
          { header: 'key', value: (s) => s.setKey },
          { header: 'source type', value: (s) => s.sourceType },
          { header: 'mappings', value: (s) => String(s.mappings.length) },
          { header: 'updated', value: (s) => time(s.updatedAt) },
          { header: 'name', value: (s) => s.displayName },
        ],
        `No field-mapping sets in tenant ${this.flags.tenant}.`,
      ),
    );
    return sets;
  }
}
