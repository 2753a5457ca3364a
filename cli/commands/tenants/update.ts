import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { showTenant } from '../../tenants.js';
import { PatchTenantInput } from '../../../shared/schemas/tenants.js';
import { parseInput } from '../../../shared/schemas/validate.js';

export default class TenantsUpdate extends BaseCommand<typeof TenantsUpdate> {
  static override summary = "Change a tenant's name or whether it accepts sign-ups.";
  static override description =
    'The same change as PATCH /api/admin/tenants/{id}, audited (tenant.update). With --if-match (the ETag ' +
    '`iam tenants get` shows), a tenant changed since you read it is refused (precondition_failed) and nothing ' +
    'is written. An offboarded, purged or recovering tenant cannot be changed (tenant_not_editable).';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --name "Acme Europe"',
    {
      description: 'Only if nobody changed it since you read it.',
      command: `<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --allow-signup --if-match '"t1764000000000"'`,
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    name: Flags.string({ description: 'the new display name' }),
    'allow-signup': Flags.boolean({
      description: 'whether an unknown address that proves its mailbox becomes a user',
      allowNo: true,
    }),
    'if-match': Flags.string({ description: 'the ETag read before (refused if the tenant changed since)' }),
  };
  static override fieldFlags = { name: 'name', allow_signup: 'allow-signup' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = {
      ...(f.name !== undefined ? { name: f.name } : {}),
      ...(f['allow-signup'] !== undefined ? { allow_signup: f['allow-signup'] } : {}),
    };
    this.serviceInput = input;
    const patch = parseInput(PatchTenantInput, input);
    const { tenant, etag } = await this.services.tenantDirectory.update(
      f.tenant,
      patch,
      this.actor,
      f['if-match'] ? { ifMatch: f['if-match'] } : {},
    );
    this.log(showTenant(tenant));
    // The ETag in its own field: --json prints updated_at as ISO 8601, not the number it is made of.
    return { ...tenant, etag };
  }
}
