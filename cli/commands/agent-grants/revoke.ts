import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { readLine } from '../../http/prompt.js';
import type { AgentGrantRevokeResult } from '../../../shared/services/agents/grants.js';

export default class AgentGrantsRevoke extends BaseCommand<typeof AgentGrantsRevoke> {
  static override summary = 'Revoke an agent grant for good: every token of it stops, no new one is issued.';
  static override description =
    'In one transaction the grant becomes revoked and its generation goes up (every token issued under it is ' +
    'inactive at once), every consent of it is revoked, its token families are queued for revocation (a running ' +
    'daemon records them) and an audit event agent_grant.revoke is recorded. It cannot be undone: a new grant is ' +
    'needed. Type the grant id to confirm, or pass --confirm <id> (or --yes) in a script; --json never prompts. ' +
    'The same as POST /api/admin/agent-grants/{id}/revoke.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> aag_123 --tenant ten_123',
    {
      description: 'In a script: the id typed in advance, checked before anything is revoked.',
      command: '<%= config.bin %> <%= command.id %> aag_123 --tenant ten_123 --confirm aag_123 --json',
    },
  ];
  static override args = { id: Args.string({ description: 'the grant id (aag_…)', required: true }) };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    confirm: Flags.string({ description: 'the grant id, typed in advance (no prompt)' }),
    yes: Flags.boolean({ char: 'y', description: 'do not ask for confirmation', default: false }),
  };

  async run(): Promise<AgentGrantRevokeResult> {
    const { tenant, confirm, yes } = this.flags;
    // Before anything else: a script must never hang on a prompt.
    if (!yes && confirm === undefined && this.jsonEnabled())
      throw new CliFailure('confirmation_required', '--json never prompts: pass --confirm <grant id> or --yes', 2);
    await this.requireTenant(tenant);
    // The grant first: an unknown id is not_found before any prompt, and the prompt names the agent.
    const g = await this.services.agentGrants.get(tenant, this.args.id);
    if (!yes) {
      const typed =
        confirm ??
        (await readLine(
          `This revokes agent grant ${g.grant_id} of agent ${g.client_id} for good. Type the grant id to confirm: `,
        ));
      if (typed === undefined) throw new CliFailure('aborted', 'aborted: nothing was revoked');
      if (typed.trim() !== g.grant_id)
        throw new CliFailure(
          'confirmation_mismatch',
          `${confirm === undefined ? 'the typed confirmation' : '--confirm'} does not match ${g.grant_id}: ` +
            'nothing was revoked',
        );
    }
    const r = await this.services.agentGrants.revoke(tenant, g.grant_id, this.actor);
    const n = r.token_families_pending_revocation;
    this.log(
      `Revoked agent grant ${r.grant_id} (generation ${r.generation}): its tokens are inactive now; ` +
        `${n} token famil${n === 1 ? 'y' : 'ies'} queued for revocation (${r.revocation_outbox_id}).`,
    );
    return r;
  }
}
