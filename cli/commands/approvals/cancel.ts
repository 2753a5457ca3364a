import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { approvalText } from '../../approvals.js';

export default class ApprovalsCancel extends BaseCommand<typeof ApprovalsCancel> {
  static override summary = 'Withdraw a pending approval request; its pending steps are cancelled.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> apr_123 --tenant ten_123 --reason-code withdrawn --json',
  ];
  static override args = { request: Args.string({ description: 'the approval request (apr_…)', required: true }) };
  static override flags = { tenant: tenantFlag, 'reason-code': Flags.string({ description: 'reason code' }) };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const a = await this.services.approvals.cancel(
      this.flags.tenant,
      this.args.request,
      { reason_code: this.flags['reason-code'] },
      this.actor,
    );
    this.log(approvalText(a));
    return a;
  }
}
