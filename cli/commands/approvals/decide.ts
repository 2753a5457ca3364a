import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { approvalText } from '../../approvals.js';
import { DecisionInput } from '../../../shared/schemas/approvals.js';
import { parseInput } from '../../../shared/schemas/validate.js';

export default class ApprovalsDecide extends BaseCommand<typeof ApprovalsDecide> {
  static override summary = "Approve or deny one step of an approval request, as that step's approver.";
  static override description =
    "--actor must be the step's approver and never the requester (self_approval_forbidden). When every step " +
    'approved the request becomes approved and a grant is issued; one deny makes it denied.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> apr_123 manager --tenant ten_123 --decision approve --actor usr_m',
    '<%= config.bin %> <%= command.id %> apr_123 manager --tenant ten_123 --decision deny --actor usr_m ' +
      '--reason-code not_justified --json',
  ];
  static override args = {
    request: Args.string({ description: 'the approval request (apr_…)', required: true }),
    step: Args.string({ description: 'the step_key', required: true }),
  };
  static override flags = {
    tenant: tenantFlag,
    decision: Flags.string({ description: 'the decision', options: ['approve', 'deny'], required: true }),
    actor: Flags.string({ description: 'the deciding user (usr_…)', required: true }),
    'reason-code': Flags.string({ description: 'reason code' }),
    'reason-note': Flags.string({ description: 'reason note' }),
  };
  static override fieldFlags = { actor_subject_id: 'actor', reason_code: 'reason-code', reason_note: 'reason-note' };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const input = parseInput(DecisionInput, {
      decision: this.flags.decision,
      actor_subject_id: this.flags.actor,
      reason_code: this.flags['reason-code'],
      reason_note: this.flags['reason-note'],
    });
    const a = await this.services.approvals.decide(
      this.flags.tenant,
      this.args.request,
      this.args.step,
      input,
      this.actor,
    );
    this.log(approvalText(a));
    return a;
  }
}
