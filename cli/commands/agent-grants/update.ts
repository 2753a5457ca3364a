import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { expiryFlag, jsonFlag } from '../../agent-grants.js';
import type { AgentGrantUpdateResult } from '../../../shared/services/agents/grants.js';

export default class AgentGrantsUpdate extends BaseCommand<typeof AgentGrantsUpdate> {
  static override summary = 'Update (recertify) an agent grant: details, purpose or expiry.';
  static override description =
    'Every ceiling is checked again. In one transaction the generation and consent version go up, the prior ' +
    'consent is revoked, the token families of older generations are queued for revocation (a running daemon ' +
    'revokes them) and an audit event is recorded. The grantor must consent again. Extending the expiry is the ' +
    'explicit recertification.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> aag_123 --tenant ten_123 --expires-in-days 60',
    `<%= config.bin %> <%= command.id %> aag_123 --tenant ten_123 --json --details '[{"type":"docs"}]'`,
    '<%= config.bin %> <%= command.id %> aag_123 --tenant ten_123 --no-purpose',
  ];
  static override args = { id: Args.string({ description: 'the grant id (aag_…)', required: true }) };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    details: Flags.string({ description: 'authorization_details, a JSON array (at most 20)' }),
    purpose: Flags.string({ description: 'why (at most 500 characters)', exclusive: ['no-purpose'] }),
    'no-purpose': Flags.boolean({ description: 'clear the purpose', default: false }),
    'expires-at': Flags.integer({ description: 'deadline, ms since the epoch (at most 90 days ahead)' }),
    'expires-in-days': Flags.integer({ description: 'deadline in days from now (1 to 90)' }),
  };
  static override fieldFlags = { authorization_details: 'details', expires_at: 'expires-at' };

  async run(): Promise<AgentGrantUpdateResult> {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const expires = expiryFlag(f['expires-at'], f['expires-in-days']);
    const input = {
      ...(f.details !== undefined ? { authorization_details: jsonFlag('details', f.details) } : {}),
      ...(f.purpose !== undefined ? { purpose: f.purpose } : f['no-purpose'] ? { purpose: null } : {}),
      ...(expires !== undefined ? { expires_at: expires } : {}),
    };
    this.serviceInput = input;
    const r = await this.services.agentGrants.update(f.tenant, this.args.id, input, this.actor);
    const n = r.token_families_pending_revocation;
    this.log(
      `Updated agent grant ${r.grant_id}: generation ${r.generation}, consent version ${r.consent_version}; ` +
        `${n} token famil${n === 1 ? 'y' : 'ies'} ` +
        `queued for revocation (${r.revocation_outbox_id}); renewed consent required.`,
    );
    return r;
  }
}
