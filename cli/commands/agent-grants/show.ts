import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { grantSummary } from '../../agent-grants.js';
import type { AgentGrantView } from '../../../shared/services/agents/grants.js';

export default class AgentGrantsShow extends BaseCommand<typeof AgentGrantsShow> {
  static override summary = 'Show one agent grant.';
  static override description =
    'Prints the grant: its agent client, principals, authorization details, purpose, expiry, generation, consent ' +
    'version and whether renewed consent is required.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> aag_123 --tenant ten_123',
    '<%= config.bin %> <%= command.id %> aag_123 --tenant ten_123 --json | jq .generation',
  ];
  static override args = { id: Args.string({ description: 'the grant id (aag_…)', required: true }) };
  static override flags = { tenant: Flags.string({ description: 'id of the tenant', required: true }) };

  async run(): Promise<AgentGrantView> {
    await this.requireTenant(this.flags.tenant);
    const g = await this.services.agentGrants.get(this.flags.tenant, this.args.id);
    this.log(`Agent grant ${g.grant_id}`);
    this.log(grantSummary(g));
    return g;
  }
}
