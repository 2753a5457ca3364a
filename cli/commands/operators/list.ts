import { BaseCommand } from '../../base.js';
import type { OperatorView } from '../../../shared/services/console/operators.js';

export default class OperatorsList extends BaseCommand<typeof OperatorsList> {
  static override summary = 'List the console operators and their roles.';
  static override description =
    'One line per role held: email, role, and for a tenant-admin the tenant. Empty before the first ' +
    '`iam operators add`. See docs/console.md.';
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json'];

  async run(): Promise<OperatorView[]> {
    const list = await this.services.operators.list();
    if (!list.length) this.log('No operators yet: add one with `iam operators add --email … --role platform-admin`.');
    for (const o of list) this.log(`${o.email}\t${o.role}${o.tenant_id ? `\t${o.tenant_id}` : ''}\t${o.user_id}`);
    return list;
  }
}
