import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { readLine } from '../../http/prompt.js';
import { showTenant } from '../../tenants.js';

export default class TenantsOffboard extends BaseCommand<typeof TenantsOffboard> {
  static override summary = 'Offboard a tenant: refuse its sign-ins and tokens now, delete everything it owns later.';
  static override description =
    "Asks you to type the tenant's name (or takes it from --confirm; --json never prompts, so it needs " +
    '--confirm). The tenant moves to pending_deletion: sign-in, tokens, introspection and its admins are refused ' +
    'as for a suspended tenant. After the grace period (IAM_TENANT_PURGE_GRACE_SECONDS, default 7 days) the ' +
    'tenant-purge job deletes every row it owns but the append-only records; until then `iam tenants restore` ' +
    'brings it back. Take `iam tenants export` first. Audited (tenant.offboard). See docs/tenant-lifecycle.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --reason "contract ended"',
    {
      description: 'In a script: the name is the confirmation.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --confirm "Acme Europe" --json',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    confirm: Flags.string({ description: "the tenant's name, exactly (instead of typing it at the prompt)" }),
    reason: Flags.string({ description: 'why (recorded in the audit event)' }),
  };

  async run() {
    const f = this.flags;
    const t = await this.requireTenant(f.tenant);
    if (f.confirm === undefined && this.jsonEnabled()) {
      throw new CliFailure('confirmation_required', '--json never prompts: pass --confirm <the tenant name>', 2);
    }
    const typed = f.confirm ?? (await readLine(`Type the tenant's name (${t.name}) to offboard ${t.id}: `));
    // Checked here so a typo changes nothing; the service checks it again.
    if (typed !== t.name) {
      throw new CliFailure(
        'confirmation_mismatch',
        `${f.confirm === undefined ? 'the typed name' : '--confirm'} is not the tenant's name: nothing was changed`,
      );
    }
    const tenant = await this.services.tenantDirectory.offboard(
      f.tenant,
      { confirm: typed, ...(f.reason ? { reason: f.reason } : {}) },
      this.actor,
    );
    this.log(showTenant(tenant));
    this.log(`Restorable until the purge: iam tenants restore --tenant ${tenant.id}`);
    return tenant;
  }
}
