import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import type { OperatorView } from '../../../shared/services/console/operators.js';
import { roleFlag } from './add.js';

export default class OperatorsRemove extends BaseCommand<typeof OperatorsRemove> {
  static override summary = "Take an operator role away (the person's user stays).";
  static override description =
    'Removes one operator role; a console session already open loses the role at its next request (the ' +
    'role is read on every request). Audited as role.unassign and operator.remove. See docs/console.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --email bob@example.com --role tenant-admin --tenant ten_123',
  ];
  static override flags = {
    email: Flags.string({ description: "the operator's email address", required: true }),
    role: roleFlag,
    tenant: Flags.string({ description: 'for tenant-admin: the id of the tenant administered' }),
  };

  async run(): Promise<OperatorView & { removed: boolean }> {
    const f = this.flags;
    const r = await this.services.operators.remove({ email: f.email, role: f.role, tenantId: f.tenant }, this.actor);
    this.log(r.removed ? `${r.email} is no longer ${r.role}` : `${r.email} did not hold ${r.role}`);
    return r;
  }
}
