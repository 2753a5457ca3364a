import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { list, table } from '../../format.js';

export default class IdpList extends BaseCommand<typeof IdpList> {
  static override summary = "List a tenant's upstream OpenID providers.";
  static override description =
    'Lists the upstream OpenID providers of one tenant, in the order of their login buttons. Client secrets are ' +
    'never shown: they are stored encrypted.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --json | jq -r '.[].issuer'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const idps = await this.services.upstreamIdps.list(this.flags.tenant);
    this.log(
      table(
        idps,
        [
          { header: 'id', value: (p) => p.id },
          { header: 'slug', value: (p) => p.slug },
          { header: 'status', value: (p) => p.status },
          { header: 'issuer', value: (p) => p.issuer },
          { header: 'client_id', value: (p) => p.client_id },
          { header: 'scopes', value: (p) => list(p.scopes, ' ') },
          { header: 'name', value: (p) => p.display_name },
        ],
        `No upstream providers in tenant ${this.flags.tenant}.`,
      ),
    );
    return idps;
  }
}
