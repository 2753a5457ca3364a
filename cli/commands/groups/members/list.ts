import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { table, time } from '../../../format.js';
import { groupFlags } from '../../../groups.js';
import type { MemberPage } from '../../../../shared/schemas/groups.js';

export default class GroupsMembersList extends BaseCommand<typeof GroupsMembersList> {
  static override summary = "List a group's members.";
  static override description =
    'In user id order, one page at a time; when there are more the next cursor is printed on stderr (give it ' +
    'back with --cursor). See docs/rbac.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456 --json | jq -r '.[].email'",
  ];
  static override flags = {
    ...groupFlags,
    limit: Flags.integer({ description: 'most members to list', default: 100, min: 1, max: 1000 }),
    cursor: Flags.string({ description: 'continue after the page that printed this cursor' }),
  };
  static override fieldFlags = { limit: 'limit', cursor: 'cursor' };

  async run(): Promise<MemberPage['members']> {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const q = { limit: f.limit, ...(f.cursor ? { cursor: f.cursor } : {}) };
    const page = await this.services.groups.members(f.tenant, f.group, q, '');
    this.log(
      table(
        page.members,
        [
          { header: 'user', value: (m) => m.user_id },
          { header: 'email', value: (m) => m.email },
          { header: 'name', value: (m) => m.name },
          { header: 'added', value: (m) => time(m.added_at) },
        ],
        `Group ${f.group} has no members.`,
      ),
    );
    if (page.next_cursor) process.stderr.write(`More members: --cursor ${page.next_cursor}\n`);
    return page.members;
  }
}
