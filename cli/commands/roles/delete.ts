import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { usage } from '../../http/base.js';
import { readLine } from '../../http/prompt.js';
import { tenantFlag } from '../../rbac.js';

export default class RolesDelete extends BaseCommand<typeof RolesDelete> {
  static override summary = 'Delete a role with its permissions and its user and group assignments.';
  static override description =
    'Refused (role_in_use) while a client holds the role or a SCIM mapping set names it: the error names them. ' +
    'Revokes nothing already issued: the holders keep their tokens until they expire, and the next refresh ' +
    "gets the reduced scope. Type the role's name to confirm, or pass --confirm <name> in a script; --json " +
    'never prompts. Audited as role.delete with the count of assignments removed. The same as ' +
    'DELETE /api/admin/tenants/{tenantId}/roles/{id}.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --confirm 'Billing admin' --json",
  ];
  static override args = { role: Args.string({ description: 'the role id (role_…)', required: true }) };
  static override flags = {
    tenant: tenantFlag,
    confirm: Flags.string({ description: "the role's name, instead of typing it" }),
  };

  async run() {
    const f = this.flags;
    if (this.jsonEnabled() && f.confirm === undefined)
      throw usage('confirmation_required', "--json never prompts: pass --confirm with the role's name");
    await this.requireTenant(f.tenant);
    const { role } = await this.services.rbac.roles.get(f.tenant, this.args.role);
    const typed = f.confirm ?? (await readLine(`Type the role's name (${role.name}) to delete it: `));
    if (typed?.trim() !== role.name)
      throw new CliFailure(
        'confirmation_mismatch',
        `the confirmation does not match ${role.name}: nothing was deleted`,
      );
    const r = await this.services.rbac.roles.delete(f.tenant, role.id, this.actor);
    this.log(`Deleted role ${role.name} (${role.id}); ${r.assignments_removed} assignment(s) removed.`);
    return { deleted: true, id: role.id, ...r };
  }
}
