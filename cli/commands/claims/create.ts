import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { parseBinding, schemaFields } from '../../claims.js';
import { CARDINALITIES, FIELD_TYPES } from '../../../shared/schemas/claims.js';
import type { CustomClaimSchema } from '../../../shared/services/custom-claims.js';

export default class ClaimsCreate extends BaseCommand<typeof ClaimsCreate> {
  static override summary = 'Define a custom claim schema in a tenant.';
  static override description =
    'The key must match ^[a-z][a-z0-9_]{0,63}$ and may not be a registered JWT claim, an OpenID Connect ' +
    'standard claim or a protocol claim (docs/claims.md). A claim is emitted only into the token types its ' +
    '--bind options name: `id_token`, `access_token` or `userinfo`, optionally followed by `:scope1,scope2` ' +
    '(then only when one of those scopes was granted).';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --key department --label Department --type string ' +
      '--bind id_token:profile --bind userinfo:profile',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --key roles --label Roles --type string ' +
      '--cardinality many --bind access_token',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --key birthday --label Birthday --type date --pii --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    key: Flags.string({ description: 'the claim key (field_key)', required: true }),
    label: Flags.string({ description: 'display label', required: true }),
    type: Flags.string({ description: 'value type', options: [...FIELD_TYPES], required: true }),
    cardinality: Flags.string({ description: 'one value, or a JSON array of values', options: [...CARDINALITIES] }),
    pii: Flags.boolean({ description: 'the value is personal data (is_pii)', default: false }),
    required: Flags.boolean({ description: "every write of a user's claims must give a value", default: false }),
    inactive: Flags.boolean({ description: 'create it inactive (is_active 0)', default: false }),
    bind: Flags.string({
      description: 'token type that carries the claim, e.g. id_token or userinfo:profile (repeatable)',
      multiple: true,
    }),
  };
  static override fieldFlags = {
    field_key: 'key',
    display_label: 'label',
    field_type: 'type',
    cardinality: 'cardinality',
    field_usage_bindings: 'bind',
  };

  async run(): Promise<CustomClaimSchema> {
    await this.requireTenant(this.flags.tenant);
    const input = {
      field_key: this.flags.key,
      display_label: this.flags.label,
      field_type: this.flags.type,
      ...(this.flags.cardinality ? { cardinality: this.flags.cardinality } : {}),
      is_pii: this.flags.pii ? 1 : 0,
      is_required: this.flags.required ? 1 : 0,
      is_active: this.flags.inactive ? 0 : 1,
      field_usage_bindings: (this.flags.bind ?? []).map(parseBinding),
    };
    this.serviceInput = input;
    const schema = await this.services.customClaims.createSchema(this.flags.tenant, input, this.actor);
    this.log(`Created claim schema ${schema.id} (${schema.field_key}) in tenant ${schema.tenant_id}`);
    this.log(schemaFields(schema));
    return schema;
  }
}
