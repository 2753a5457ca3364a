import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';

export default class RelationshipsRemove extends BaseCommand<typeof RelationshipsRemove> {
  static override summary = 'Remove a relationship the user takes part in.';
  static override examples = ['<%= config.bin %> <%= command.id %> usr_abc rel_123 --tenant ten_123 --json'];
  static override args = {
    user: Args.string({ description: 'the user (usr_…), subject or related party of the edge', required: true }),
    relationship: Args.string({ description: 'the relationship id (rel_…)', required: true }),
  };
  static override flags = { tenant: tenantFlag };

  async run() {
    await this.requireTenant(this.flags.tenant);
    await this.services.relationships.remove(this.flags.tenant, this.args.user, this.args.relationship, this.actor);
    this.log(`Removed ${this.args.relationship}.`);
    return { removed: true, id: this.args.relationship };
  }
}
