import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';

export default class ScimSettingsSet extends BaseCommand<typeof ScimSettingsSet> {
  static override summary = 'Set what DELETE /scim/v2/Users/{id} does in the tenant: erase or deactivate.';
  static override description =
    'Many identity providers send DELETE when a user is unassigned from the application; deactivate keeps ' +
    'the user (disabled, every session and token ended) instead of erasing them. Audited as ' +
    'tenant.scim_settings.update. The same as PUT …/tenants/{tenantId}/scim-settings.';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_123 --delete deactivate'];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    delete: Flags.string({ description: 'what DELETE does', options: ['erase', 'deactivate'], required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const r = await this.services.scim.users.setSettings(
      this.flags.tenant,
      { scim_delete: this.flags.delete },
      this.actor,
    );
    this.log(`scim_delete: ${r.scim_delete}`);
    return r;
  }
}
