import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { table, time } from '../../format.js';
import type { GroupPage } from '../../../shared/schemas/groups.js';

export default class GroupsList extends BaseCommand<typeof GroupsList> {
  static override summary = "List a tenant's groups.";
  static override description =
    'Oldest first (created_at, then id), one page at a time; --name-prefix narrows it (without regard to ' +
    'case). When there are more groups the cursor of the next page is printed on stderr (give it back with ' +
    '--cursor). See docs/rbac.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --name-prefix eng --json | jq -r '.[].id'",
  ];
  static override flags = {
    tenant: tenantFlag,
    'name-prefix': Flags.string({ description: 'only names starting with this' }),
    limit: Flags.integer({ description: 'most groups to list', default: 100, min: 1, max: 1000 }),
    cursor: Flags.string({ description: 'continue after the page that printed this cursor' }),
  };
  static override fieldFlags = { name_prefix: 'name-prefix', limit: 'limit', cursor: 'cursor' };

  async run(): Promise<GroupPage['groups']> {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const query = { name_prefix: f['name-prefix'], limit: f.limit, cursor: f.cursor };
    const page = await this.services.groups.list(
      f.tenant,
      Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)),
      '',
    );
    this.log(
      table(
        page.groups,
        [
          { header: 'id', value: (g) => g.id },
          { header: 'name', value: (g) => g.display_name },
          { header: 'created', value: (g) => time(g.created_at) },
          { header: 'external id', value: (g) => g.external_id ?? '' },
        ],
        `No groups in tenant ${f.tenant} match.`,
      ),
    );
    // --json prints the array; the next page's cursor goes to stderr (stdout stays one document).
    if (page.next_cursor) process.stderr.write(`More groups: --cursor ${page.next_cursor}\n`);
    return page.groups;
  }
}
