import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { bindingOf, describeRecovery } from '../../recovery.js';

export default class RecoveryStart extends BaseCommand<typeof RecoveryStart> {
  static override summary = 'Open a disaster-recovery operation for a tenant and publish its deny route.';
  static override description =
    'Sets the tenant to "recovering" (every login, token request, bearer call and introspection for it is refused ' +
    "at once on every daemon), signs a deny route publication with the service's signing key, reads it back and " +
    'leaves the operation awaiting the restore. Prints the deterministic operation id (dr_<tenant>_<n>).\n\n' +
    "Run it on a host that reaches the database, with the daemon's environment (IAM_DATABASE_URL, IAM_SECRET_KEY, " +
    'IAM_ISSUER). One operation per tenant may be open; running start again resumes an operation interrupted while ' +
    "publishing its deny. Next: restore the tenant's data, then `iam recovery confirm-restore`. See " +
    'docs/recovery.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --reason "INC-42: tenant rows corrupted by a bad import"',
    {
      description: 'Capture the operation id in a script.',
      command:
        'OP=$(<%= config.bin %> <%= command.id %> --tenant ten_123 --reason "INC-42" --json ' +
        '| jq -r .recovery.operationId)',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant to recover', required: true }),
    reason: Flags.string({
      description: 'why (incident reference); recorded in the operation and the audit log',
      required: true,
    }),
  };
  static override fieldFlags = { reason: 'reason' };

  async run() {
    await this.requireTenant(this.flags.tenant);
    if (!process.env.IAM_ISSUER?.trim()) {
      // The issuer names the environment and signs into the deny publication's `iss`.
      process.stderr.write(
        "Warning: IAM_ISSUER is not set, so the environment id and the deny publication's issuer are " +
          `${this.settings.issuer}; run with the daemon's environment file.\n`,
      );
    }
    const service = this.services.recovery;
    const { recovery, resumed } = await service.start(
      {
        tenantId: this.flags.tenant,
        reason: this.flags.reason,
        environmentId: this.settings.issuer,
        binding: bindingOf(this.settings, this.config.version),
      },
      this.actor,
    );
    this.log(
      resumed
        ? `Resumed recovery ${recovery.operationId}: the deny is now observed.`
        : `Started recovery ${recovery.operationId}: tenant ${recovery.tenantId} is recovering; ` +
            'the deny route is published.',
    );
    this.log(describeRecovery(recovery));
    return { recovery, resumed };
  }
}
