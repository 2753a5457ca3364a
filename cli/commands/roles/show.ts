import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import { roleText, tenantFlag } from '../../rbac.js';

export default class RolesShow extends BaseCommand<typeof RolesShow> {
  static override summary = 'Show a role: its permissions and who holds it.';
  static override description =
    'The role (GET /api/admin/tenants/{tenantId}/roles/{id}) and its first 1000 holders ' +
    '(GET …/roles/{id}/assignments): users, groups and clients.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --json',
  ];
  static override args = { role: Args.string({ description: 'the role id (role_…)', required: true }) };
  static override flags = { tenant: tenantFlag };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const { role } = await this.services.rbac.roles.get(f.tenant, this.args.role);
    const { assignments } = await this.services.rbac.assignments.list(f.tenant, role.id, { limit: 1000 });
    this.log(roleText(role));
    this.log('');
    this.log(
      table(
        assignments,
        [
          { header: 'type', value: (a) => a.principal_type },
          { header: 'holder', value: (a) => a.principal_id },
          { header: 'since', value: (a) => time(a.created_at) },
        ],
        'Nobody holds it.',
      ),
    );
    return { ...role, assignments };
  }
}
