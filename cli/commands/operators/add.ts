import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields } from '../../format.js';
import type { OperatorView } from '../../../shared/services/console/operators.js';

export const roleFlag = Flags.string({
  description: 'platform-admin (every tenant), tenant-admin (the --tenant named), auditor (read only)',
  options: ['platform-admin', 'tenant-admin', 'auditor'],
  required: true,
});

export default class OperatorsAdd extends BaseCommand<typeof OperatorsAdd> {
  static override summary = 'Give a person an operator role in the console.';
  static override description =
    'Operators are users of the platform tenant (created, and provisioned, on the first add; its id is kept in ' +
    'service_meta as platform_tenant_id). The user is created there when the address is new; they sign in to ' +
    '/console with an email code or a passkey. A tenant-admin names the tenant it administers (repeat the ' +
    'command for more tenants). Audited as role.assign and operator.add. See docs/console.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --email ada@example.com --role platform-admin',
    '<%= config.bin %> <%= command.id %> --email bob@example.com --role tenant-admin --tenant ten_123',
  ];
  static override flags = {
    email: Flags.string({ description: "the operator's email address", required: true }),
    role: roleFlag,
    tenant: Flags.string({ description: 'for tenant-admin: the id of the tenant administered' }),
  };

  async run(): Promise<OperatorView & { created: boolean }> {
    const f = this.flags;
    const r = await this.services.operators.add({ email: f.email, role: f.role, tenantId: f.tenant }, this.actor);
    this.log(r.created ? `${r.email} is now ${r.role}` : `${r.email} was already ${r.role}`);
    this.log(
      fields([
        ['user', r.user_id],
        ['role', r.role],
        ['tenant', r.tenant_id ?? 'every tenant'],
      ]),
    );
    return r;
  }
}
