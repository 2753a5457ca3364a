import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { parseBinding, schemaFields } from '../../claims.js';
import type { CustomClaimSchema } from '../../../shared/services/custom-claims.js';

export default class ClaimsUpdate extends BaseCommand<typeof ClaimsUpdate> {
  static override summary = "Change a claim schema's label, flags or bindings.";
  static override description =
    'Only what is named changes. --bind replaces every binding (repeat it for several); --no-bindings removes ' +
    'them all, so the claim is no longer emitted. --active reactivates a deactivated schema. The key changes only ' +
    'by rename; the type and cardinality never. System schemas cannot be changed.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> ccs_123 --tenant ten_123 --bind id_token --bind userinfo:profile',
    '<%= config.bin %> <%= command.id %> ccs_123 --tenant ten_123 --label "Cost center" --required',
    '<%= config.bin %> <%= command.id %> ccs_123 --tenant ten_123 --active --json',
  ];
  static override args = {
    id: Args.string({ description: 'the schema id (ccs_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    label: Flags.string({ description: 'display label' }),
    pii: Flags.boolean({ description: 'the value is personal data (--no-pii: it is not)', allowNo: true }),
    required: Flags.boolean({ description: 'every write must give a value (--no-required: optional)', allowNo: true }),
    active: Flags.boolean({ description: 'reactivate (--no-active: deactivate)', allowNo: true }),
    bind: Flags.string({
      description: 'token type that carries the claim, e.g. id_token or userinfo:profile (repeatable; replaces all)',
      multiple: true,
      exclusive: ['no-bindings'],
    }),
    'no-bindings': Flags.boolean({ description: 'remove every binding', default: false }),
  };
  static override fieldFlags = { display_label: 'label', field_usage_bindings: 'bind' };

  async run(): Promise<CustomClaimSchema> {
    await this.requireTenant(this.flags.tenant);
    const f = this.flags;
    const flag = (v: boolean | undefined) => (v === undefined ? undefined : v ? 1 : 0);
    const input = {
      ...(f.label !== undefined ? { display_label: f.label } : {}),
      ...(f.pii !== undefined ? { is_pii: flag(f.pii) } : {}),
      ...(f.required !== undefined ? { is_required: flag(f.required) } : {}),
      ...(f.active !== undefined ? { is_active: flag(f.active) } : {}),
      ...(f.bind
        ? { field_usage_bindings: f.bind.map(parseBinding) }
        : f['no-bindings']
          ? { field_usage_bindings: [] }
          : {}),
    };
    this.serviceInput = input;
    const schema = await this.services.customClaims.updateSchema(f.tenant, this.args.id, input, this.actor);
    this.log(`Updated claim schema ${schema.id} (${schema.field_key})`);
    this.log(schemaFields(schema));
    return schema;
  }
}
