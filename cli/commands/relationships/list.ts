import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { relationshipsText } from '../../approvals.js';

export default class RelationshipsList extends BaseCommand<typeof RelationshipsList> {
  static override summary = "List a user's relationships in force, outgoing and incoming.";
  static override description =
    'Outgoing: edges where the user is the subject (with the related user email and name); incoming: edges ' +
    'toward the user (with the subject user email and name). Expired edges are not listed.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> usr_abc --tenant ten_123',
    '<%= config.bin %> <%= command.id %> usr_abc --tenant ten_123 --direction incoming --json',
  ];
  static override args = { user: Args.string({ description: 'the user (usr_…)', required: true }) };
  static override flags = {
    tenant: tenantFlag,
    direction: Flags.string({ description: 'only one direction', options: ['incoming', 'outgoing'] }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const r = await this.services.relationships.list(
      this.flags.tenant,
      this.args.user,
      this.flags.direction as 'incoming' | 'outgoing' | undefined,
    );
    this.log(relationshipsText(r));
    return r;
  }
}
