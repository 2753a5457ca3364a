import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields, time } from '../../format.js';
import type { UserPublic } from '../../../shared/services/directory.js';

export default class UsersCreate extends BaseCommand<typeof UsersCreate> {
  static override summary = 'Create a user in a tenant.';
  static override description =
    'Creates an active user. The email address is stored in lower case and must be unique within the tenant. ' +
    '--claims gives the OpenID Connect standard claims (Core §5.1) as one JSON object: given_name, ' +
    'family_name, middle_name, nickname, preferred_username, profile, picture, website, gender, birthdate, ' +
    'zoneinfo, locale, phone_number (E.164), phone_number_verified and address (docs/claims.md).';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --email ada@example.com --name "Ada Lovelace"',
    {
      description: 'With standard claims.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --email ada@example.com --name "Ada Lovelace" ' +
        '--claims \'{"given_name":"Ada","family_name":"Lovelace","locale":"en-GB","phone_number":"+442071234567"}\'',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    email: Flags.string({ description: 'email address, unique within the tenant', required: true }),
    name: Flags.string({ description: 'display name', required: true }),
    claims: Flags.string({ description: 'standard claims as a JSON object (given_name, locale, address, …)' }),
  };
  static override fieldFlags = { email: 'email', name: 'name' };

  async run(): Promise<UserPublic> {
    await this.requireTenant(this.flags.tenant);
    const input = { email: this.flags.email, name: this.flags.name, ...this.standardClaims() };
    this.serviceInput = input;
    const user = await this.services.directory.createUser(this.flags.tenant, input, this.actor);
    this.log(`Created user ${user.id} in tenant ${user.tenant_id}`);
    this.log(
      fields([
        ['id', user.id],
        ['email', user.email],
        ['name', user.name],
        ['status', user.status],
        ['created', time(user.created_at)],
      ]),
    );
    return { ...user };
  }

  /** --claims, parsed: a JSON object, or the flag named in the refusal. */
  private standardClaims(): Record<string, unknown> {
    const raw = this.flags.claims;
    if (raw === undefined) return {};
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      this.error('--claims: not JSON; give one object such as {"given_name":"Ada"}', { exit: 2 });
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) this.error('--claims: must be a JSON object', { exit: 2 });
    return v as Record<string, unknown>;
  }
}
