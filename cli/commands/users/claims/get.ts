import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { userClaimsFields } from '../../../claims.js';
import type { UserClaims } from '../../../../shared/services/custom-claims.js';

export default class UsersClaimsGet extends BaseCommand<typeof UsersClaimsGet> {
  static override summary = "Show a user's claim values.";
  static override description =
    "Prints the user's values of the tenant's active custom claim schemas, and the system claims of the user record.";
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --json | jq .claims',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    user: Flags.string({ description: 'id of the user', required: true }),
  };

  async run(): Promise<UserClaims> {
    await this.requireTenant(this.flags.tenant);
    const claims = await this.services.customClaims.getUserClaims(this.flags.tenant, this.flags.user);
    this.log(userClaimsFields(claims));
    return claims;
  }
}
