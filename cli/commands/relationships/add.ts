import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { parseWhen } from '../../approvals.js';
import { RELATIONSHIP_TYPES, RelationshipInput } from '../../../shared/schemas/approvals.js';
import { parseInput } from '../../../shared/schemas/validate.js';

export default class RelationshipsAdd extends BaseCommand<typeof RelationshipsAdd> {
  static override summary = 'Add a relationship from a user to another user of the same tenant.';
  static override description =
    `"<user> <type> <related>": e.g. usr_A manager_of usr_B. Types: ${RELATIONSHIP_TYPES.join(', ')}, or ` +
    'custom:<name>. An edge may expire (--expires-at); an expired edge is no longer listed nor used to find ' +
    'approvers. See docs/approvals.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> usr_manager --tenant ten_123 --type manager_of --related usr_report',
    '<%= config.bin %> <%= command.id %> usr_a --tenant ten_123 --type delegate_of --related usr_b ' +
      '--expires-at 2026-12-31T00:00:00Z --json',
  ];
  static override args = { user: Args.string({ description: 'the subject user (usr_…)', required: true }) };
  static override flags = {
    tenant: tenantFlag,
    type: Flags.string({ description: 'relationship type', required: true }),
    related: Flags.string({ description: 'the related user (usr_…)', required: true }),
    'expires-at': Flags.string({ description: 'when the edge ends (ISO 8601 or epoch ms); default never' }),
  };
  static override fieldFlags = {
    relationship_type: 'type',
    related_subject_id: 'related',
    expires_at: 'expires-at',
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const input = parseInput(RelationshipInput, {
      related_subject_id: this.flags.related,
      relationship_type: this.flags.type,
      expires_at: parseWhen('expires-at', this.flags['expires-at']),
    });
    const rel = await this.services.relationships.add(this.flags.tenant, this.args.user, input, this.actor);
    this.log(`Added ${rel.id}: ${rel.subject_id} ${rel.relationship_type} ${rel.related_subject_id}.`);
    return rel;
  }
}
