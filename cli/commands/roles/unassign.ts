import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { principalFlags, principalOf, tenantFlag } from '../../rbac.js';

export default class RolesUnassign extends BaseCommand<typeof RolesUnassign> {
  static override summary = 'Take a role away from a user, a group or a client.';
  static override description =
    'Revokes nothing already issued: tokens live until they expire and the next refresh gets the reduced scope. ' +
    'With --revoke-tokens (a user only) the user is also signed out everywhere: every session and refresh token ' +
    'family ends now (audited as user.sign_out). Removing a role not held changes nothing. Audited as ' +
    'role.unassign. The same as DELETE /api/admin/tenants/{tenantId}/roles/{id}/assignments/{type}/{principalId}.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --group grp_123',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --user usr_123 --revoke-tokens --json',
  ];
  static override args = { role: Args.string({ description: 'the role id (role_…)', required: true }) };
  static override flags = {
    tenant: tenantFlag,
    ...principalFlags,
    'revoke-tokens': Flags.boolean({
      description: "a user's assignment: also sign the user out everywhere (every token family revoked)",
      default: false,
    }),
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const p = principalOf(f);
    const r = await this.services.rbac.assignments.unassign(f.tenant, this.args.role, p, this.actor, {
      revokeTokens: f['revoke-tokens'],
    });
    this.log(
      r.removed
        ? `Removed role ${r.role_id} from ${p.type} ${p.id}.`
        : `${p.type} ${p.id} did not hold role ${r.role_id}: nothing changed.`,
    );
    if (r.families_revoked !== undefined)
      this.log(`Signed out: ${r.sessions_ended} session(s) and ${r.families_revoked} token family(ies) ended.`);
    return r;
  }
}
