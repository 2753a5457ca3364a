import { Args, Errors, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';

export default class RegistrationDefaultTenant extends BaseCommand<typeof RegistrationDefaultTenant> {
  static override summary = 'Show or set the tenant where registrations that name no tenant land.';
  static override description =
    'A registration at POST /register without an initial access token and without the tenant_id member ' +
    "lands in this tenant (MCP clients register so), under that tenant's registration policy. Without an " +
    'argument, shows it; --clear removes it (such registrations are then refused). Stored in the platform ' +
    'settings, audited (platform.registration.default_tenant). See docs/registration.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> ten_0123abcd',
    '<%= config.bin %> <%= command.id %> --clear --json',
  ];
  static override args = {
    tenantId: Args.string({ description: 'id of the tenant', required: false }),
  };
  static override flags = {
    clear: Flags.boolean({ description: 'no default tenant' }),
  };
  static override fieldFlags = { defaultTenantId: 'tenantId' };

  async run() {
    const id = this.args.tenantId;
    if (id !== undefined && this.flags.clear)
      throw new Errors.CLIError('give a tenant id or --clear, not both', { exit: 2 });
    const r =
      id === undefined && !this.flags.clear
        ? await this.services.registration.tokens.defaultTenant()
        : await this.services.registration.tokens.setDefaultTenant({ defaultTenantId: id ?? null }, this.actor);
    this.log(
      r.defaultTenantId ? `Default registration tenant: ${r.defaultTenantId}` : 'No default registration tenant.',
    );
    return r;
  }
}
