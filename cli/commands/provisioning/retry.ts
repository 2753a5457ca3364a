import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields, time } from '../../format.js';
import { progressPrinter, requireSettled } from '../../provisioning.js';

export default class ProvisioningRetry extends BaseCommand<typeof ProvisioningRetry> {
  static override summary = 'Retry a tenant\'s blocked provisioning and wait until it is done.';
  static override description = `Requeues the tenant's blocked provisioning operation (as POST /api/admin/tenants/{id}/provisioning/retry does): steps already completed are kept and skipped, the blocked step gets a fresh set of IAM_PROVISIONING_MAX_ATTEMPTS attempts, and the retry is recorded in the operation's history and the audit log. Fix the cause named by the step's last_error_code first (see docs/provisioning.md).

Then, like \`iam tenants create\`, it runs the steps here and waits until the tenant is active (--no-wait returns at once). An operation that is not blocked is refused with provisioning_not_blocked.`;
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_abc123',
    '<%= config.bin %> <%= command.id %> --tenant ten_abc123 --no-wait --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant whose provisioning is blocked', required: true }),
    wait: Flags.boolean({ description: 'wait until the tenant is provisioned', default: true, allowNo: true }),
    timeout: Flags.integer({ description: 'seconds to wait, backoff included', default: 300, min: 1, max: 86_400 }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const provisioning = this.provisioning();
    let op = await provisioning.retry(this.flags.tenant, this.actor);
    if (this.flags.wait) {
      op = await provisioning.waitFor(this.flags.tenant, { timeoutMs: this.flags.timeout * 1000, onProgress: progressPrinter(!this.jsonEnabled()) });
      requireSettled(op, this.flags.timeout);
    }
    const tenant = await this.directory().requireTenant(this.flags.tenant);
    this.log(`Provisioning of tenant ${tenant.id}: ${op.status}`);
    this.log(fields([
      ['state', tenant.lifecycle_state],
      ['operation', op.operation_id],
      ['retries', String(op.retry_count)],
      ['completed', time(op.completed_at)],
    ]));
    return op;
  }
}
