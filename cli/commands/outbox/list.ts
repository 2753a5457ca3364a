import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import { OUTBOX_STATUSES, type OutboxEntryView } from '../../../shared/services/outbox.js';

export default class OutboxList extends BaseCommand<typeof OutboxList> {
  static override summary = 'List outbox entries (mail waiting, sent or failed), most recently changed first.';
  static override description =
    "Lists the outbox: each entry's tenant, kind, status, attempts, next attempt, the last failed attempt's " +
    'error code and sanitised cause, and the provider that delivered it. Never the message itself: payloads ' +
    'are sealed, and erased once delivered. Error codes: docs/email.md. Delivered entries are kept a day, ' +
    'failed ones a week.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --status failed',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --status pending --limit 20',
    "<%= config.bin %> <%= command.id %> --status failed --json | jq -r '.[] | [.id, .last_error_code] | @tsv'",
  ];
  static override flags = {
    tenant: Flags.string({ description: "only this tenant's entries" }),
    status: Flags.string({ description: 'only entries in this status', options: [...OUTBOX_STATUSES] }),
    limit: Flags.integer({ description: 'most entries to list', default: 50, min: 1, max: 1000 }),
  };
  static override fieldFlags = { status: 'status' };

  async run(): Promise<OutboxEntryView[]> {
    if (this.flags.tenant) await this.requireTenant(this.flags.tenant);
    const filter = {
      ...(this.flags.tenant ? { tenantId: this.flags.tenant } : {}),
      ...(this.flags.status ? { status: this.flags.status as OutboxEntryView['status'] } : {}),
      limit: this.flags.limit,
    };
    this.serviceInput = filter;
    const entries = await this.services.outbox.list(filter);
    const empty = [
      'No outbox entries',
      this.flags.status ? ` in status ${this.flags.status}` : '',
      this.flags.tenant ? ` for tenant ${this.flags.tenant}` : '',
      '.',
    ].join('');
    this.log(
      table(
        entries,
        [
          { header: 'id', value: (e) => e.id },
          { header: 'tenant', value: (e) => e.tenant_id ?? '-' },
          { header: 'kind', value: (e) => e.kind },
          { header: 'status', value: (e) => e.status },
          { header: 'attempts', value: (e) => String(e.attempts) },
          { header: 'next attempt', value: (e) => (e.status === 'pending' ? time(e.next_attempt_at) : '-') },
          { header: 'via', value: (e) => e.delivered_via ?? '-' },
          { header: 'updated', value: (e) => time(e.updated_at) },
          { header: 'error', value: (e) => e.last_error_code ?? '-' },
          { header: 'cause', value: (e) => e.last_error_cause ?? '-' },
        ],
        empty,
      ),
    );
    return entries;
  }
}
