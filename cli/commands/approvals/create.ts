import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { readJsonFile, tenantFlag } from '../../federation.js';
import { approvalText } from '../../approvals.js';
import { ApprovalCreateInput } from '../../../shared/schemas/approvals.js';
import { parseInput } from '../../../shared/schemas/validate.js';

/** `key=usr_…` or `key=usr_…:relation`. */
function parseStep(v: string): { step_key: string; subject_id: string; relation_type?: string } {
  const m = /^([^=]+)=([^:]+)(?::(.+))?$/.exec(v);
  if (!m) throw new CliFailure('invalid_request', `--step: "${v}" is not step_key=user_id[:relation_type]`);
  return { step_key: m[1], subject_id: m[2], ...(m[3] ? { relation_type: m[3] } : {}) };
}

export default class ApprovalsCreate extends BaseCommand<typeof ApprovalsCreate> {
  static override summary = 'Open an approval request; each approver is notified by email through the outbox.';
  static override description =
    'Approvers are the --step flags (step_key=user_id), or, without any, every user holding a manager_of ' +
    'relationship toward the target. Every step must approve; one deny ends the request; a step not decided ' +
    'within --step-timeout seconds expires the request. The requester can never approve. See docs/approvals.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --requester usr_a --target usr_b --action read_mailbox ' +
      '--resource-class mailbox --audience https://mail.example.com --step manager=usr_m',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --requester usr_a --target usr_b --action export ' +
      '--resource-class hr_record --audience hr --investigation inv-7 --json',
  ];
  static override flags = {
    tenant: tenantFlag,
    requester: Flags.string({ description: 'requesting user (usr_…)', required: true }),
    target: Flags.string({ description: 'the user the request is about (usr_…)', required: true }),
    action: Flags.string({ description: 'requested action, e.g. read_mailbox', required: true }),
    'resource-class': Flags.string({ description: 'resource class, e.g. mailbox', required: true }),
    audience: Flags.string({ description: 'the audience the grant is for', required: true }),
    step: Flags.string({ description: 'an approver: step_key=user_id[:relation_type]', multiple: true }),
    'scope-file': Flags.string({ description: 'a JSON file with the scope_json object' }),
    investigation: Flags.string({ description: 'investigation id' }),
    'reason-code': Flags.string({ description: 'reason code' }),
    'reason-note': Flags.string({ description: 'reason note' }),
    'step-timeout': Flags.integer({ description: 'seconds each step has to be decided (default 86400)' }),
    'grant-ttl': Flags.integer({ description: 'lifetime of the grant in seconds (default 3600)' }),
  };
  static override fieldFlags = {
    requester_subject_id: 'requester',
    target_subject_id: 'target',
    requested_action: 'action',
    resource_class: 'resource-class',
    steps: 'step',
    scope_json: 'scope-file',
    investigation_id: 'investigation',
    reason_code: 'reason-code',
    reason_note: 'reason-note',
    step_timeout_seconds: 'step-timeout',
    grant_ttl_seconds: 'grant-ttl',
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = parseInput(ApprovalCreateInput, {
      requester_subject_id: f.requester,
      target_subject_id: f.target,
      requested_action: f.action,
      resource_class: f['resource-class'],
      audience: f.audience,
      ...(f.step ? { steps: f.step.map(parseStep) } : {}),
      ...(f['scope-file'] ? { scope_json: readJsonFile(f['scope-file'], 'scope-file') } : {}),
      investigation_id: f.investigation,
      reason_code: f['reason-code'],
      reason_note: f['reason-note'],
      step_timeout_seconds: f['step-timeout'],
      grant_ttl_seconds: f['grant-ttl'],
    });
    const a = await this.services.approvals.create(f.tenant, input, this.actor, 'cli');
    this.log(approvalText(a));
    return a;
  }
}
