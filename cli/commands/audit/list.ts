import { Flags } from '@oclif/core';
import { table, time } from '../../format.js';
import { HttpCommand, timeFlag } from '../../http/base.js';

interface AuditEvent {
  id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string;
  outcome: string;
  request_id: string | null;
  summary: Record<string, unknown>;
  created_at: number;
}
interface Page {
  events: AuditEvent[];
  next_cursor?: string;
}

export default class AuditList extends HttpCommand<typeof AuditList> {
  static override summary = 'List audit events through the admin API, newest first.';
  static override description =
    'GET /api/admin/audit with the given filters. A platform admin (iam.platform) sees every tenant; a tenant ' +
    'admin (iam.admin) only its own. ' +
    'One page is printed (--limit, default 50, at most 200) with the cursor of the next; --cursor continues from ' +
    'it, and --all follows every cursor ' +
    '(progress on stderr). Needs `iam login`. See docs/cli.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --action tenant.suspend',
    {
      description: 'Everything one client did since a time, as JSON.',
      command: '<%= config.bin %> <%= command.id %> --actor cl_0123abcd --since 2026-11-22T00:00:00Z --all --json',
    },
    {
      description: 'The next page.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --cursor WzE3NjM4...',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: "only this tenant's events (a tenant admin sees only its own anyway)" }),
    action: Flags.string({ description: 'only this action, e.g. tenant.suspend, client.create' }),
    actor: Flags.string({
      description: 'only events by this actor id (a client_id, or an operator name for CLI actions)',
    }),
    target: Flags.string({ description: 'only events about this target id' }),
    outcome: Flags.string({ description: 'only this outcome', options: ['success', 'failure'] }),
    since: Flags.string({ description: 'events at or after this time (ISO 8601 or epoch ms)' }),
    until: Flags.string({ description: 'events before this time (ISO 8601 or epoch ms)' }),
    limit: Flags.integer({ description: 'events per page (1-200)', min: 1, max: 200 }),
    cursor: Flags.string({ description: 'continue after the page that printed this cursor' }),
    all: Flags.boolean({ description: 'follow next cursors until every matching event is listed', default: false }),
  };

  async run() {
    const api = this.client();
    const since = timeFlag('since', this.flags.since);
    const until = timeFlag('until', this.flags.until);
    const base: Record<string, string> = {};
    const put = (k: string, v: string | number | undefined) => {
      if (v !== undefined) base[k] = String(v);
    };
    put('tenant_id', this.flags.tenant);
    put('action', this.flags.action);
    put('actor_id', this.flags.actor);
    put('target_id', this.flags.target);
    put('outcome', this.flags.outcome);
    put('since', since);
    put('until', until);
    put('limit', this.flags.limit);

    const events: AuditEvent[] = [];
    let cursor = this.flags.cursor;
    let pages = 0;
    for (;;) {
      const q = new URLSearchParams({ ...base, ...(cursor ? { cursor } : {}) });
      const page = await api.get<Page>(`/api/admin/audit?${q}`);
      events.push(...page.events);
      pages++;
      cursor = page.next_cursor;
      if (!this.flags.all || !cursor) break;
      if (process.stderr.isTTY && !this.jsonEnabled())
        process.stderr.write(`\r${events.length} events, ${pages} pages…`);
      else this.note(`${events.length} events so far (${pages} pages)…`);
    }
    if (this.flags.all && pages > 1 && process.stderr.isTTY && !this.jsonEnabled()) process.stderr.write('\n');

    this.log(
      table(
        events,
        [
          { header: 'time', value: (e) => time(e.created_at) },
          { header: 'tenant', value: (e) => e.tenant_id ?? '-' },
          { header: 'actor', value: (e) => `${e.actor_type}:${e.actor_id}` },
          { header: 'action', value: (e) => e.action },
          { header: 'target', value: (e) => `${e.target_type}:${e.target_id}` },
          { header: 'outcome', value: (e) => e.outcome },
          { header: 'reason', value: (e) => (typeof e.summary.reason === 'string' ? e.summary.reason : '-') },
        ],
        'No audit events match.',
      ),
    );
    if (cursor) this.log(`\nMore events: re-run with --cursor ${cursor} (or --all)`);
    return { events, ...(cursor ? { next_cursor: cursor } : {}) };
  }
}
