import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { fields, time } from '../../../format.js';

export default class RegistrationTokensCreate extends BaseCommand<typeof RegistrationTokensCreate> {
  static override summary = 'Issue an initial access token: a client registers with it at POST /register.';
  static override description =
    'RFC 7591 §3: the registering client sends it as Authorization: Bearer. It admits --max-uses ' +
    'registrations (1 to 1000, default 1) until it expires (--expires-in seconds, default one day, at most 30 ' +
    "days), in the tenant's policy and, with --scope-ceiling, within those scopes only. Printed once; only its " +
    'SHA-256 is stored. Audited (registration.initial_access_token.create). See docs/registration.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --max-uses 10 --expires-in 3600 --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    'max-uses': Flags.integer({ description: 'registrations it admits (1 to 1000)', default: 1 }),
    'expires-in': Flags.integer({ description: 'seconds it is valid (60 to 2592000)', default: 86_400 }),
    'scope-ceiling': Flags.string({ description: 'scopes its clients may hold, space-separated' }),
  };
  static override fieldFlags = { maxUses: 'max-uses', expiresInSeconds: 'expires-in', scopeCeiling: 'scope-ceiling' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = {
      maxUses: f['max-uses'],
      expiresInSeconds: f['expires-in'],
      ...(f['scope-ceiling'] !== undefined ? { scopeCeiling: f['scope-ceiling'].split(/[\s,]+/).filter(Boolean) } : {}),
    };
    this.serviceInput = input;
    const r = await this.services.registration.tokens.create(f.tenant, input, this.actor);
    this.log(
      fields([
        ['token', r.token],
        ['id', r.id],
        ['max uses', String(r.maxUses)],
        ['expires at', time(r.expiresAt)],
      ]),
    );
    this.log('Hand the token to the client now: it is not shown again.');
    return r;
  }
}
