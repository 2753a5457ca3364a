import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { schemaTable } from '../../claims.js';
import type { CustomClaimSchema } from '../../../shared/services/custom-claims.js';

export default class ClaimsList extends BaseCommand<typeof ClaimsList> {
  static override summary = "List a tenant's claim schemas.";
  static override description =
    'Lists the system schemas (the claims of the user record: email, name) and the custom ones, oldest first, ' +
    'with their type, flags, operation status and token bindings.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --json | jq -r '.[] | select(.is_system == 0) | .field_key'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run(): Promise<CustomClaimSchema[]> {
    await this.requireTenant(this.flags.tenant);
    const schemas = await this.services.customClaims.listSchemas(this.flags.tenant);
    this.log(schemaTable(schemas, this.flags.tenant));
    return schemas;
  }
}
