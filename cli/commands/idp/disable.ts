import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';

export default class IdpDisable extends BaseCommand<typeof IdpDisable> {
  static override summary = 'Disable (or with --enable, enable again) an upstream OpenID provider.';
  static override description =
    'A disabled provider leaves the login page and its sign-ins are refused; its links to local users are kept, ' +
    'so enabling it again restores them. Providers are never deleted.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> corp --tenant ten_123',
    '<%= config.bin %> <%= command.id %> uip_abc --tenant ten_123 --enable',
  ];
  static override args = {
    provider: Args.string({ description: 'the provider id (uip_…) or slug', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    enable: Flags.boolean({ description: 'enable the provider instead', default: false }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const status = this.flags.enable ? 'active' : 'disabled';
    const idp = await this.services.upstreamIdps.setStatus(
      this.flags.tenant,
      this.args.provider,
      { status },
      this.actor,
    );
    this.log(`Upstream provider "${idp.display_name}" (${idp.id}) is ${idp.status}.`);
    return idp;
  }
}
