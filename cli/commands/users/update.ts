import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { readClaimValue } from '../../claims.js';
import { userDetailFields } from '../../users.js';
import type { UserDetail } from '../../../shared/services/users.js';

export default class UsersUpdate extends BaseCommand<typeof UsersUpdate> {
  static override summary = "Edit a user's name, email address, email_verified or custom claim values.";
  static override description =
    'Changes only what is given. A new --email is stored unverified, and the old address is told of the change ' +
    'by mail, unless --email-verified vouches for the new one. --claim key=value sets one custom claim value ' +
    '(repeatable; validated against its schema as `iam users claims set` does; `key=` clears it); the values not ' +
    'named are kept. --if-match takes the ETag `iam users get` printed: if the user changed since, nothing is ' +
    'written and the command fails with precondition_failed. Audited. See docs/directory.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --name "Ada King"',
    {
      description: 'A new address the operator has checked, only if nobody changed the user since it was read.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --email ada@example.org ' +
        '--email-verified --if-match "$(iam users get --tenant ten_123 --user usr_123 --json | jq -r .etag)"',
    },
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --claim department=sales --claim level=3',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    user: Flags.string({ description: 'id of the user', required: true }),
    name: Flags.string({ description: 'new display name' }),
    email: Flags.string({ description: 'new email address, unique within the tenant' }),
    'email-verified': Flags.boolean({
      description: 'the address is verified (--no-email-verified: it is not)',
      allowNo: true,
    }),
    claim: Flags.string({ description: 'key=value of a custom claim (repeatable; key= clears it)', multiple: true }),
    'if-match': Flags.string({ description: 'the ETag from `iam users get`: refuse if the user changed since' }),
  };
  static override fieldFlags = { email: 'email', name: 'name', email_verified: 'email-verified', claims: 'claim' };

  async run(): Promise<UserDetail & { etag: string }> {
    const { tenant, user } = this.flags;
    await this.requireTenant(tenant);
    const input: Record<string, unknown> = {};
    if (this.flags.name !== undefined) input.name = this.flags.name;
    if (this.flags.email !== undefined) input.email = this.flags.email;
    if (this.flags['email-verified'] !== undefined) input.email_verified = this.flags['email-verified'];
    if (this.flags.claim?.length) {
      const schemas = new Map((await this.services.customClaims.listSchemas(tenant)).map((s) => [s.field_key, s]));
      const claims: Record<string, unknown> = {};
      for (const pair of this.flags.claim) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new CliFailure('invalid_request', `invalid --claim ${JSON.stringify(pair)}: use key=value`);
        const key = pair.slice(0, eq);
        const raw = pair.slice(eq + 1);
        claims[key] = raw === '' ? null : readClaimValue(schemas.get(key), key, raw, '--claim');
      }
      input.claims = claims;
    }
    if (!Object.keys(input).length) {
      throw new CliFailure('usage_error', 'give at least one of --name, --email, --email-verified, --claim', 2);
    }
    this.serviceInput = input;
    const ifMatch = this.flags['if-match'];
    const { user: updated, etag } = await this.services.userDirectory.update(tenant, user, input, this.actor, {
      ...(ifMatch !== undefined ? { ifMatch } : {}),
    });
    this.log(`Updated user ${updated.id}`);
    this.log(userDetailFields(updated, etag));
    return { ...updated, etag };
  }
}
