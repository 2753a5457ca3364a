import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';

export default class RecoveryList extends BaseCommand<typeof RecoveryList> {
  static override summary = 'List recovery operations, oldest first.';
  static override description =
    "Lists every recovery operation, or one tenant's. Details of one: `iam recovery show --operation <id>`.";
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: "only this tenant's operations" }),
  };

  async run() {
    if (this.flags.tenant) await this.requireTenant(this.flags.tenant);
    const service = this.services.recovery;
    const ops = await service.list(this.flags.tenant, this.settings.recoveryStabilizationSeconds);
    this.log(
      table(
        ops,
        [
          { header: 'operation', value: (r) => r.operationId },
          { header: 'tenant', value: (r) => r.tenantId },
          { header: 'state', value: (r) => r.state },
          {
            header: 'lookup',
            value: (r) =>
              `${r.lookupReprojection.stage} ` +
              `${r.lookupReprojection.verifiedRows}/${r.lookupReprojection.projectedRows}`,
          },
          { header: 'created', value: (r) => time(r.createdAt) },
          { header: 'updated', value: (r) => time(r.updatedAt) },
        ],
        this.flags.tenant ? `No recovery operations for tenant ${this.flags.tenant}.` : 'No recovery operations.',
      ),
    );
    return ops;
  }
}
