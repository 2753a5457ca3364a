import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showTokenExchange } from '../../../token-exchange.js';
import { noteFor } from '../../../../shared/services/token-exchange/settings.js';

export default class TenantsTokenExchangeShow extends BaseCommand<typeof TenantsTokenExchangeShow> {
  static override summary = "Show a tenant's token exchange settings: ID-JAGs accepted and issued, delegation.";
  static override description =
    'The settings in force, as GET /api/admin/settings/token-exchange answers them: token exchange (RFC 8693), ' +
    'the ID-JAG issuers the tenant trusts, the authorization servers it issues ID-JAGs for (which local client, ' +
    'under which client id there, for which scopes and resources), and whether an actor needs may_act. See ' +
    'docs/token-exchange.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq '.settings.idJagIssuance'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const settings = await this.services.tokenExchangeSettings.get(this.flags.tenant);
    const note = noteFor(this.flags.tenant, settings);
    this.log(showTokenExchange(this.flags.tenant, settings, note));
    return { success: true, settings, note };
  }
}
