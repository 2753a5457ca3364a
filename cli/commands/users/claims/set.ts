import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../../base.js';
import { readClaimValue, userClaimsFields } from '../../../claims.js';
import type { UserClaims } from '../../../../shared/services/custom-claims.js';

export default class UsersClaimsSet extends BaseCommand<typeof UsersClaimsSet> {
  static override summary = "Set a user's custom claim values.";
  static override description =
    "Replaces the user's custom claim values with the ones given (--merge keeps the values not named). Each " +
    'value is validated against its schema: type, cardinality (a `many` claim takes a JSON array or ' +
    'comma-separated items), email format, ISO 8601 dates; every active required claim must have a value. ' +
    '`--set key=` with --merge removes a value; `--claims` takes the whole map as a JSON object.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --set department=sales --set level=3',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --set roles=admin,auditor --merge',
    `<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --claims '{"department":"sales"}' --json`,
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    user: Flags.string({ description: 'id of the user', required: true }),
    set: Flags.string({ description: 'key=value (repeatable)', multiple: true }),
    claims: Flags.string({ description: 'the claims as a JSON object of key to value', exclusive: ['set'] }),
    merge: Flags.boolean({ description: "keep the user's values of keys not named", default: false }),
  };

  async run(): Promise<UserClaims> {
    const { tenant, user } = this.flags;
    await this.requireTenant(tenant);
    const service = this.services.customClaims;
    let given: Record<string, unknown> = {};
    if (this.flags.claims !== undefined) {
      try {
        given = JSON.parse(this.flags.claims) as Record<string, unknown>;
      } catch {
        throw new CliFailure('invalid_request', 'invalid --claims: not a JSON object');
      }
      if (!given || typeof given !== 'object' || Array.isArray(given)) {
        throw new CliFailure('invalid_request', 'invalid --claims: not a JSON object');
      }
    } else {
      const schemas = new Map((await service.listSchemas(tenant)).map((s) => [s.field_key, s]));
      for (const pair of this.flags.set ?? []) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new CliFailure('invalid_request', `invalid --set ${JSON.stringify(pair)}: use key=value`);
        const key = pair.slice(0, eq);
        const raw = pair.slice(eq + 1);
        given[key] = this.flags.merge && raw === '' ? null : readClaimValue(schemas.get(key), key, raw, '--set');
      }
    }
    const claims = this.flags.merge ? { ...(await service.getUserClaims(tenant, user)).claims, ...given } : given;
    this.serviceInput = { claims };
    const result = await service.setUserClaims(tenant, user, { claims }, this.actor);
    this.log(`Set ${Object.keys(result.claims).length} claim value(s) of user ${user}`);
    this.log(userClaimsFields(result));
    return result;
  }
}
