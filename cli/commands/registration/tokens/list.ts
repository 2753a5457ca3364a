import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { list, table, time } from '../../../format.js';

export default class RegistrationTokensList extends BaseCommand<typeof RegistrationTokensList> {
  static override summary = "List a tenant's initial access tokens: uses and expiry, never their values.";
  static override description =
    'As GET /api/admin/tenants/{tenantId}/registration/initial-access-tokens answers. See docs/registration.md.';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json'];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const tokens = await this.services.registration.tokens.list(this.flags.tenant);
    this.log(
      table(
        tokens,
        [
          { header: 'ID', value: (x) => x.id },
          { header: 'USES', value: (x) => `${x.uses}/${x.maxUses}` },
          { header: 'EXPIRES', value: (x) => time(x.expiresAt) },
          { header: 'SCOPE CEILING', value: (x) => list(x.scopeCeiling ?? [], ' ') },
        ],
        'No initial access tokens.',
      ),
    );
    return { tokens };
  }
}
