import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { principalFlags, principalOf, tenantFlag } from '../../rbac.js';

export default class RolesAssign extends BaseCommand<typeof RolesAssign> {
  static override summary = 'Give a role to a user, a group or a client_credentials client.';
  static override description =
    'Exactly one of --user, --group, --client (a client_id; the client must use the client_credentials grant: ' +
    'machine-to-machine RBAC). Assigning a role already held changes nothing. Audited as role.assign. The same ' +
    'as POST /api/admin/tenants/{tenantId}/roles/{id}/assignments.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --user usr_123',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --group grp_123 --json',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --client Xk2v9c0aQ1pUuW3e',
  ];
  static override args = { role: Args.string({ description: 'the role id (role_…)', required: true }) };
  static override flags = { tenant: tenantFlag, ...principalFlags };
  static override fieldFlags = { principal_id: 'user, --group or --client' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const p = principalOf(f);
    const input = { principal_type: p.type, principal_id: p.id };
    const r = await this.services.rbac.assignments.assign(f.tenant, this.args.role, input, this.actor);
    this.log(
      r.created
        ? `Assigned role ${this.args.role} to ${p.type} ${p.id}.`
        : `${p.type} ${p.id} already holds role ${this.args.role}: nothing changed.`,
    );
    return { ...r.assignment, created: r.created };
  }
}
