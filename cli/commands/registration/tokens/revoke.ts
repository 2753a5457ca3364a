import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';

export default class RegistrationTokensRevoke extends BaseCommand<typeof RegistrationTokensRevoke> {
  static override summary = 'Revoke an initial access token by its id.';
  static override description =
    'The token admits no more registrations from now on; the clients it admitted stay (delete them with ' +
    '`iam clients delete`). Audited (registration.initial_access_token.revoke). See docs/registration.md.';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --id iat_3q27fK1cVQm0pA8e'];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    id: Flags.string({ description: 'the id of the token (from create or list)', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    await this.services.registration.tokens.revoke(this.flags.tenant, this.flags.id, this.actor);
    this.log(`Revoked initial access token ${this.flags.id}.`);
    return { id: this.flags.id, revoked: true };
  }
}
