import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { schemaFields } from '../../claims.js';
import type { CustomClaimSchema } from '../../../shared/services/custom-claims.js';

export default class ClaimsShow extends BaseCommand<typeof ClaimsShow> {
  static override summary = 'Show one claim schema.';
  static override description = 'Prints the schema record: key, label, type, flags, operation status and bindings.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> ccs_123 --tenant ten_123',
    '<%= config.bin %> <%= command.id %> ccs_123 --tenant ten_123 --json | jq .field_usage_bindings',
  ];
  static override args = {
    id: Args.string({ description: 'the schema id (ccs_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run(): Promise<CustomClaimSchema> {
    await this.requireTenant(this.flags.tenant);
    const schema = await this.services.customClaims.getSchema(this.flags.tenant, this.args.id);
    this.log(schemaFields(schema));
    return schema;
  }
}
