import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { table, time } from '../../format.js';
import { APPROVAL_STATUSES, APPROVALS_DEFAULT_LIMIT, APPROVALS_MAX_LIMIT } from '../../../shared/schemas/approvals.js';

export default class ApprovalsList extends BaseCommand<typeof ApprovalsList> {
  static override summary = 'List approval requests with their steps and grants, newest first.';
  static override description =
    `Statuses: ${APPROVAL_STATUSES.join(', ')}. The --json output is {items, total}: ` +
    'total counts every request matching the filters.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --status pending',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --investigation inv-7 --json',
  ];
  static override flags = {
    tenant: tenantFlag,
    status: Flags.string({ description: 'only requests in this status', options: [...APPROVAL_STATUSES] }),
    investigation: Flags.string({ description: 'only requests of this investigation' }),
    limit: Flags.integer({
      description: `most requests to list (at most ${APPROVALS_MAX_LIMIT})`,
      default: APPROVALS_DEFAULT_LIMIT,
      min: 1,
      max: APPROVALS_MAX_LIMIT,
    }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const r = await this.services.approvals.list(
      this.flags.tenant,
      { status: this.flags.status, investigation_id: this.flags.investigation },
      this.flags.limit,
    );
    this.log(
      table(
        r.items,
        [
          { header: 'id', value: (a) => a.id },
          { header: 'status', value: (a) => a.status },
          { header: 'action', value: (a) => `${a.requested_action}/${a.resource_class}` },
          { header: 'requester', value: (a) => a.requester_subject_id },
          { header: 'target', value: (a) => a.target_subject_id },
          { header: 'steps', value: (a) => a.approvals.map((s) => `${s.step_key}:${s.status}`).join(' ') },
          { header: 'created', value: (a) => time(a.created_at) },
        ],
        `No approval requests in tenant ${this.flags.tenant}.`,
      ) + `\n${r.items.length} of ${r.total}`,
    );
    return r;
  }
}
