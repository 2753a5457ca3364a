import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';

export default class ScimTokenRevoke extends BaseCommand<typeof ScimTokenRevoke> {
  static override summary = 'Revoke a long-lived SCIM token by its jti.';
  static override description =
    'The token stops working on /scim/v2 at once, on every daemon (401 invalid_token). The jti is the one ' +
    '`iam scim token create` printed, also in the audit log (scim.token.create). Audited as scim.token.revoke. ' +
    'To end every token of the client at once, disable the client instead (`iam clients disable`).';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_123 --jti 3q2-7fK1cVQm0pA8eZx9Tg'];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    jti: Flags.string({ description: 'the jti of the token to revoke', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const r = await this.services.scim.tokens.revoke(this.flags.tenant, this.flags.jti, this.actor);
    this.log(`Revoked SCIM token ${r.jti}.`);
    return r;
  }
}
