import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { list, table, time } from '../../../format.js';
import { adminPasskeyRecord, type AdminPasskeyRecord } from '../../../../shared/schemas/passkeys.js';

export default class UsersPasskeysList extends BaseCommand<typeof UsersPasskeysList> {
  static override summary = "List a user's passkeys.";
  static override description =
    "Lists the user's passkeys, newest first, with public data only (never the public key or the signature " +
    'counter): the same records as GET /api/admin/tenants/{tenantId}/users/{id}/passkeys. Use it to find the ' +
    'passkey of a lost device before `iam users passkeys remove`.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --json | jq -r '.passkeys[].id'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    user: Flags.string({ description: 'id of the user', required: true }),
  };

  async run(): Promise<{ passkeys: AdminPasskeyRecord[] }> {
    const { tenant, user } = this.flags;
    await this.requireTenant(tenant);
    const passkeys = (await this.services.passkeys.listForOperator(tenant, user)).map((p) =>
      adminPasskeyRecord(user, p),
    );
    this.log(
      table(
        passkeys,
        [
          { header: 'id', value: (p) => p.id },
          { header: 'type', value: (p) => (p.device_type === 'multiDevice' ? 'synced' : 'device-bound') },
          { header: 'created', value: (p) => time(p.created_at) },
          { header: 'last used', value: (p) => time(p.last_used_at) },
          { header: 'transports', value: (p) => list(p.transports, ',') },
          { header: 'name', value: (p) => p.name },
        ],
        `User ${user} has no passkeys.`,
      ),
    );
    return { passkeys };
  }
}
