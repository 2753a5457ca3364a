import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import { errorWithCause } from '../../provisioning.js';
import type { ProvisioningOperationView } from '../../../shared/services/provisioning/index.js';

export default class ProvisioningShow extends BaseCommand<typeof ProvisioningShow> {
  static override summary = "Show a tenant's provisioning operation and its steps.";
  static override description =
    "Prints the tenant's latest provisioning operation (as GET /api/admin/tenants/{id}/provisioning does): " +
    "its status, each step's status, attempts and last error code, and the cause of each error (the kind of " +
    "failure and the peer's words, never a secret). A blocked operation names what to fix; see " +
    'docs/provisioning.md, then `iam provisioning retry`.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_abc123',
    '<%= config.bin %> <%= command.id %> --tenant ten_abc123 --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run(): Promise<ProvisioningOperationView> {
    await this.requireTenant(this.flags.tenant);
    const op = await this.services.provisioning.latest(this.flags.tenant);
    const lastError = op.last_error_code ? ` (last error ${op.last_error_code})` : '';
    this.log(`Operation ${op.operation_id}: ${op.status} at ${op.current_step}${lastError}, ${op.retry_count} retries`);
    if (op.last_error_cause) this.log(`Cause: ${op.last_error_cause}`);
    this.log(
      table(
        op.steps,
        [
          { header: 'step', value: (s) => s.step_key },
          { header: 'status', value: (s) => s.status },
          { header: 'attempts', value: (s) => String(s.attempt_count) },
          { header: 'error', value: (s) => s.last_error_code ?? '-' },
          { header: 'next attempt', value: (s) => time(s.next_attempt_at) },
          { header: 'completed', value: (s) => time(s.completed_at) },
        ],
        'no steps',
      ),
    );
    // The causes below the table: one line each, however long, for the steps not (yet) completed.
    const failing = op.steps.filter((s) => s.last_error_code && s.status !== 'completed');
    for (const s of failing) this.log(`  ${s.step_key}: ${errorWithCause(s.last_error_code, s.last_error_cause)}`);
    if (op.status === 'blocked') this.log(`Fix the cause, then run: iam provisioning retry --tenant ${op.tenant_id}`);
    return op;
  }
}
