import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import type { ResolutionDecision } from '../../../shared/services/federation/resolution.js';

export default class FederationResolve extends BaseCommand<typeof FederationResolve> {
  static override summary = 'Show which federation trust source resolves a SAML entity id, and why.';
  static override description =
    "Looks the entity id up in the verified inventories of the tenant's trust sources and applies the runtime " +
    'resolution rules: only sources with runtimeResolution.mode automatic (inventory_only never resolves), whose ' +
    "copy is not past its validUntil, that serve the role, admit the entity's registration authority, in priority " +
    'order (highest first); the first such source decides with its entityCategoryPolicy. Prints the decision and ' +
    'one line per source considered. See docs/federation.md, "Resolution".';
  static override examples = [
    '<%= config.bin %> <%= command.id %> https://idp.example.edu/idp/shibboleth --tenant ten_0123abcd',
    {
      description: 'Only as an identity provider, as JSON.',
      command:
        '<%= config.bin %> <%= command.id %> https://idp.example.edu/idp/shibboleth --tenant ten_0123abcd --role saml_idp --json',
    },
  ];
  static override args = { entityId: Args.string({ description: 'the SAML entityID', required: true }) };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    role: Flags.string({ description: 'the role the entity would act in', options: ['saml_idp', 'saml_sp'] }),
  };

  async run(): Promise<ResolutionDecision> {
    await this.requireTenant(this.flags.tenant);
    const d = await this.services.federationResolver.resolve(
      this.flags.tenant,
      this.args.entityId,
      this.flags.role as 'saml_idp' | 'saml_sp' | undefined,
    );
    this.log(`${d.decision.toUpperCase()}: ${d.reason}`);
    if (d.trustSourceId)
      this.log(
        `  trust source ${d.trustSourceId} as ${d.role}${d.attributePresetId ? `, preset ${d.attributePresetId}` : ''}`,
      );
    for (const s of d.steps)
      this.log(`  - ${s.sourceKey} (${s.trustSourceId}, priority ${s.priority}): ${s.outcome}: ${s.reason}`);
    return d;
  }
}
