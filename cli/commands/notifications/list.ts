import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { table, time } from '../../format.js';
import { NOTIFICATIONS_DEFAULT_LIMIT, NOTIFICATIONS_MAX_LIMIT } from '../../../shared/services/notification-states.js';

export default class NotificationsList extends BaseCommand<typeof NotificationsList> {
  static override summary = 'List operational notification states: what an operator must act on.';
  static override description =
    "Newest first. Conditions: metadata_expiring (a trust source's metadata expires within 7 days), " +
    'metadata_expired, signing_identity_changed, refresh_failing. One state is open per condition and subject; ' +
    'it resolves itself when the condition ends, or with `iam notifications resolve`. See docs/federation.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --state open',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --condition metadata_expiring --json',
  ];
  static override flags = {
    tenant: tenantFlag,
    state: Flags.string({ description: 'only states in this state', options: ['open', 'resolved'] }),
    condition: Flags.string({ description: 'only this condition' }),
    subject: Flags.string({ description: 'only states about this subject id (e.g. fts_…)' }),
    limit: Flags.integer({
      description: `most states to list (at most ${NOTIFICATIONS_MAX_LIMIT})`,
      default: NOTIFICATIONS_DEFAULT_LIMIT,
      min: 1,
      max: NOTIFICATIONS_MAX_LIMIT,
    }),
    offset: Flags.integer({ description: 'states to skip', default: 0, min: 0 }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const states = await this.services.fieldMapping.notifications.list(
      this.flags.tenant,
      { state: this.flags.state, condition: this.flags.condition, subjectId: this.flags.subject },
      this.flags.limit,
      this.flags.offset,
    );
    this.log(
      table(
        states,
        [
          { header: 'id', value: (s) => s.id },
          { header: 'state', value: (s) => s.state },
          { header: 'condition', value: (s) => s.condition },
          { header: 'subject', value: (s) => `${s.subjectType}:${s.subjectId}` },
          { header: 'raised', value: (s) => time(s.raisedAt) },
          { header: 'seen', value: (s) => String(s.occurrences) },
          { header: 'assigned', value: (s) => s.assignedTo ?? '-' },
        ],
        `No operational notification states in tenant ${this.flags.tenant}.`,
      ),
    );
    return states;
  }
}
