import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { usage } from '../../http/base.js';
import { readLine } from '../../http/prompt.js';
import { tenantFlag } from '../../rbac.js';

export default class PermissionsDelete extends BaseCommand<typeof PermissionsDelete> {
  static override summary = 'Delete a permission that no role holds.';
  static override description =
    'Refused (permission_in_use, naming the roles) while a role holds it: take it out of those roles first ' +
    '(`iam roles permissions set`). Type its id to confirm, or pass --yes in a script; --json never ' +
    'prompts. Audited as permission.delete. The same as DELETE /api/admin/tenants/{tenantId}/permissions/{id}.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 perm_abc',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 perm_abc --yes --json',
  ];
  static override args = { permission: Args.string({ description: 'the permission id (perm_…)', required: true }) };
  static override flags = {
    tenant: tenantFlag,
    yes: Flags.boolean({ char: 'y', description: 'do not ask for confirmation', default: false }),
  };

  async run() {
    const f = this.flags;
    const id = this.args.permission;
    if (this.jsonEnabled() && !f.yes) throw usage('confirmation_required', '--json never prompts: pass --yes');
    await this.requireTenant(f.tenant);
    if (!f.yes) {
      const typed = await readLine(`Type the id ${id} to delete the permission: `);
      if (typed?.trim() !== id) throw new CliFailure('confirmation_mismatch', 'not confirmed: nothing was deleted');
    }
    await this.services.rbac.permissions.delete(f.tenant, id, this.actor);
    this.log(`Deleted permission ${id}.`);
    return { deleted: true, id };
  }
}
