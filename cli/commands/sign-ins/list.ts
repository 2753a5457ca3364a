import { Flags } from '@oclif/core';
import { table, time } from '../../format.js';
import { HttpCommand, timeFlag } from '../../http/base.js';

interface SignIn {
  id: string;
  user_id: string | null;
  method: string;
  result: 'success' | 'failure';
  reason: string | null;
  client_id: string | null;
  ip: string | null;
  device: string;
  created_at: number;
}
interface Page {
  sign_ins: SignIn[];
  next_cursor?: string;
}

export default class SignInsList extends HttpCommand<typeof SignInsList> {
  static override summary = "List a tenant's or a user's sign-in attempts through the admin API, newest first.";
  static override description =
    'GET /api/admin/tenants/{tenant}/sign-ins, or with --user GET /api/admin/tenants/{tenant}/users/{user}/sign-ins, ' +
    'with the given filters. Failures say why (reason: wrong_code, code_expired, user_disabled, …; ' +
    'docs/directory.md), never the code. One page is printed (--limit, default 50, at most 200) with the ' +
    'cursor of the next; --cursor continues from it, and --all follows every cursor (progress on stderr). ' +
    'Needs `iam login`. See docs/cli.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --result failure',
    {
      description: "One user's passkey sign-ins since a time, as JSON.",
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --user usr_0123abcd --method passkey ' +
        '--since 2026-11-22T00:00:00Z --all --json',
    },
    {
      description: 'Attempts from one network.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --ip-prefix 203.0.113.',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'the tenant (a tenant admin reaches only its own)', required: true }),
    user: Flags.string({ description: "only this user's sign-ins (404 when the tenant has no such user)" }),
    result: Flags.string({ description: 'only successes or only failures', options: ['success', 'failure'] }),
    method: Flags.string({
      description: 'only this method',
      options: ['email_code', 'passkey', 'upstream', 'artifact'],
    }),
    client: Flags.string({ description: 'only attempts at this client_id' }),
    'ip-prefix': Flags.string({ description: 'only attempts from addresses starting so (203.0.113. or 2001:db8:)' }),
    since: Flags.string({ description: 'attempts at or after this time (ISO 8601 or epoch ms)' }),
    until: Flags.string({ description: 'attempts before this time (ISO 8601 or epoch ms)' }),
    limit: Flags.integer({ description: 'sign-ins per page (1-200)', min: 1, max: 200 }),
    cursor: Flags.string({ description: 'continue after the page that printed this cursor' }),
    all: Flags.boolean({ description: 'follow next cursors until every matching attempt is listed', default: false }),
  };

  async run() {
    const api = this.client();
    const f = this.flags;
    const base: Record<string, string> = {};
    const put = (k: string, v: string | number | undefined) => {
      if (v !== undefined) base[k] = String(v);
    };
    put('result', f.result);
    put('method', f.method);
    put('client_id', f.client);
    put('ip_prefix', f['ip-prefix']);
    put('since', timeFlag('since', f.since));
    put('until', timeFlag('until', f.until));
    put('limit', f.limit);
    const path =
      `/api/admin/tenants/${encodeURIComponent(f.tenant)}` +
      (f.user === undefined ? '' : `/users/${encodeURIComponent(f.user)}`) +
      '/sign-ins';

    const signIns: SignIn[] = [];
    let cursor = f.cursor;
    let pages = 0;
    for (;;) {
      const q = new URLSearchParams({ ...base, ...(cursor ? { cursor } : {}) });
      const page = await api.get<Page>(`${path}?${q}`);
      signIns.push(...page.sign_ins);
      pages++;
      cursor = page.next_cursor;
      if (!f.all || !cursor) break;
      if (process.stderr.isTTY && !this.jsonEnabled())
        process.stderr.write(`\r${signIns.length} sign-ins, ${pages} pages…`);
      else this.note(`${signIns.length} sign-ins so far (${pages} pages)…`);
    }
    if (f.all && pages > 1 && process.stderr.isTTY && !this.jsonEnabled()) process.stderr.write('\n');

    this.log(
      table(
        signIns,
        [
          { header: 'time', value: (s) => time(s.created_at) },
          { header: 'user', value: (s) => s.user_id ?? '-' },
          { header: 'method', value: (s) => s.method },
          { header: 'result', value: (s) => s.result },
          { header: 'reason', value: (s) => s.reason ?? '-' },
          { header: 'client', value: (s) => s.client_id ?? '-' },
          { header: 'ip', value: (s) => s.ip ?? '-' },
          { header: 'device', value: (s) => s.device },
        ],
        'No sign-ins match.',
      ),
    );
    if (cursor) this.log(`\nMore sign-ins: re-run with --cursor ${cursor} (or --all)`);
    return { sign_ins: signIns, ...(cursor ? { next_cursor: cursor } : {}) };
  }
}
