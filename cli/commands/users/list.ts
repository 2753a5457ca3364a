import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import { epochFlag } from '../../users.js';
import { USER_STATUSES } from '../../../shared/schemas/users.js';
import type { UserListItem } from '../../../shared/services/users.js';

export default class UsersList extends BaseCommand<typeof UsersList> {
  static override summary = "List and search a tenant's users.";
  static override description =
    'Lists the users of one tenant, oldest first (created_at, then id), one page at a time: the filters narrow ' +
    'it, and when there are more users the cursor of the next page is printed on stderr (give it back with ' +
    '--cursor). Times are ISO 8601 or epoch milliseconds; a "since" is inclusive, an "until" exclusive. The ' +
    'last sign-in filters leave out users who never signed in. See docs/directory.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --json | jq -r '.[].email'",
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --email-prefix ada --status active',
    {
      description: 'Who has not signed in since October.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --signed-in-until 2026-10-01T00:00:00Z',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    email: Flags.string({ description: 'only the user with exactly this address' }),
    'email-prefix': Flags.string({ description: 'only addresses starting with this' }),
    'name-prefix': Flags.string({ description: 'only names starting with this' }),
    status: Flags.string({ description: 'only users in this status', options: [...USER_STATUSES] }),
    'created-since': Flags.string({ description: 'created at or after this time' }),
    'created-until': Flags.string({ description: 'created before this time' }),
    'signed-in-since': Flags.string({ description: 'last signed in at or after this time' }),
    'signed-in-until': Flags.string({ description: 'last signed in before this time' }),
    limit: Flags.integer({ description: 'most users to list', default: 100, min: 1, max: 1000 }),
    offset: Flags.integer({ description: 'users to skip (not with --cursor)', min: 0, exclusive: ['cursor'] }),
    cursor: Flags.string({ description: 'continue after the page that printed this cursor' }),
  };
  static override fieldFlags = {
    email: 'email',
    email_prefix: 'email-prefix',
    name_prefix: 'name-prefix',
    created_since: 'created-since',
    created_until: 'created-until',
    signed_in_since: 'signed-in-since',
    signed_in_until: 'signed-in-until',
    cursor: 'cursor',
  };

  async run(): Promise<UserListItem[]> {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const query = {
      email: f.email,
      email_prefix: f['email-prefix'],
      name_prefix: f['name-prefix'],
      status: f.status,
      created_since: epochFlag('created-since', f['created-since']),
      created_until: epochFlag('created-until', f['created-until']),
      signed_in_since: epochFlag('signed-in-since', f['signed-in-since']),
      signed_in_until: epochFlag('signed-in-until', f['signed-in-until']),
      limit: f.limit,
      offset: f.offset,
      cursor: f.cursor,
    };
    const defined = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    this.serviceInput = defined;
    const page = await this.services.userDirectory.list(f.tenant, defined, '');
    this.log(
      table(
        page.users,
        [
          { header: 'id', value: (u) => u.id },
          { header: 'status', value: (u) => u.status },
          { header: 'created', value: (u) => time(u.created_at) },
          { header: 'email', value: (u) => u.email },
          { header: 'name', value: (u) => u.name },
        ],
        `No users in tenant ${f.tenant} match.`,
      ),
    );
    // The --json output stays the array it always was, so the next page's cursor goes to stderr,
    // with --json too (stdout stays one JSON document).
    if (page.next_cursor) process.stderr.write(`More users: --cursor ${page.next_cursor}\n`);
    return page.users;
  }
}
