import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields } from '../../format.js';
import { OPTIONAL_CLAIM_SCOPES } from '../../../shared/schemas/standard-claims.js';

export default class TenantsSetStandardClaims extends BaseCommand<typeof TenantsSetStandardClaims> {
  static override summary = 'Choose which optional claim scopes (address, phone) a tenant offers.';
  static override description =
    `OpenID Connect Core §5.4 defines the address and phone scopes, which release a user's postal ` +
    `address and phone number. A tenant offers neither until an operator turns it on; a client ` +
    `asking for one that is off gets invalid_scope. The scopes given replace the ones offered: ` +
    `with no --scope, the tenant offers neither. Turning a scope off stops its claims at once, in ` +
    `tokens and UserInfo of grants given before too. Users' values are set with ` +
    `\`iam users create --claims\`. The change is audited (tenant.standard_claims.update).`;
  static override examples = [
    {
      description: 'Offer both scopes (for an OpenID certification run, or a tenant that holds them).',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --scope address --scope phone',
    },
    {
      description: 'Offer neither.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    scope: Flags.string({
      description: 'an optional claim scope to offer; repeat for both',
      options: [...OPTIONAL_CLAIM_SCOPES],
      multiple: true,
    }),
  };
  static override fieldFlags = { scopes: 'scope' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = { scopes: f.scope ?? [] };
    this.serviceInput = input;
    const scopes = await this.services.directory.setStandardClaimScopes(f.tenant, input, this.actor);
    this.log(`Optional claim scopes of tenant ${f.tenant}`);
    this.log(fields([['offered', scopes.length ? scopes.join(' ') : '(none)']]));
    return { tenant_id: f.tenant, scopes };
  }
}
