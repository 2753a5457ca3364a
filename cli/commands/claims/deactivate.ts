import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { schemaFields } from '../../claims.js';
import type { CustomClaimSchema } from '../../../shared/services/custom-claims.js';

export default class ClaimsDeactivate extends BaseCommand<typeof ClaimsDeactivate> {
  static override summary = 'Deactivate a custom claim schema.';
  static override description =
    "The users' values are kept (and still exported) but are no longer put in tokens or userinfo, and writes " +
    'naming the key are refused. System schemas cannot be deactivated.';
  static override examples = ['<%= config.bin %> <%= command.id %> ccs_123 --tenant ten_123'];
  static override args = {
    id: Args.string({ description: 'the schema id (ccs_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run(): Promise<CustomClaimSchema> {
    await this.requireTenant(this.flags.tenant);
    const schema = await this.services.customClaims.deactivateSchema(this.flags.tenant, this.args.id, this.actor);
    this.log(`Claim schema ${schema.id} (${schema.field_key}) is inactive`);
    this.log(schemaFields(schema));
    return schema;
  }
}
