import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { showTenant } from '../../tenants.js';

export default class TenantsRestore extends BaseCommand<typeof TenantsRestore> {
  static override summary = 'Bring an offboarded tenant back, within its grace period.';
  static override description =
    'Takes a pending_deletion tenant back to the state it was offboarded from (active or suspended). Past ' +
    'purge_after it is refused (grace_period_over): the purge may have started. Audited (tenant.restore).';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_0123abcd'];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const tenant = await this.services.tenantDirectory.restore(this.flags.tenant, this.actor);
    this.log(showTenant(tenant));
    return tenant;
  }
}
