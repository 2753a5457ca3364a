import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import {
  certificatesFromFlags,
  payloadFromFlags,
  tenantFlag,
  trustSourceFlags,
  trustSourceLines,
} from '../../federation.js';

export default class FederationAdd extends BaseCommand<typeof FederationAdd> {
  static override summary = 'Add a federation trust source (a SAML metadata aggregate, entity metadata or federation).';
  static override description =
    'Creates the source with automatic polling (hourly unless --interval) of --metadata-url; the metadata poller ' +
    'fetches it from then on. Pin the federation signing certificate with --cert-file: metadata is only accepted ' +
    'when signed by a pinned certificate. Runtime resolution is inventory_only unless --resolution automatic, ' +
    'which needs --role and the field-mapping set of each role. See docs/federation.md.';
  static override examples = [
    {
      description: 'An eduGAIN-style aggregate, identity providers resolved at sign-in',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --key edugain --name eduGAIN --type saml_aggregate ' +
        '--metadata-url https://mds.edugain.org/edugain-v2.xml --pattern "https://mds.edugain.org/*" ' +
        '--cert-file edugain-signer.pem --resolution automatic --role saml_idp --idp-mapping-set fms_abc ' +
        '--preset research_federation.v1',
    },
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --key partner --name Partner --type saml_metadata ' +
      '--metadata-url https://partner.example/metadata.xml --polling manual --json',
  ];
  static override flags = {
    tenant: tenantFlag,
    key: Flags.string({ description: 'sourceKey: unique in the tenant (letters, digits, . _ ~ -)', required: true }),
    ...trustSourceFlags,
    name: Flags.string({ description: 'display name', required: true }),
    type: Flags.string({
      description: 'source type',
      options: ['saml_aggregate', 'saml_metadata', 'saml_federation'],
      default: 'saml_aggregate',
    }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const input = {
      sourceType: this.flags.type,
      sourceKey: this.flags.key,
      displayName: this.flags.name,
      lifecycleState: this.flags.lifecycle,
      protocolPayload: payloadFromFlags(this.flags),
      certificates: certificatesFromFlags(this.flags['cert-file']),
    };
    const source = await this.services.fieldMapping.trustSources.create(this.flags.tenant, input, this.actor);
    this.log(`Added federation trust source ${source.id} in tenant ${source.tenantId}`);
    this.log(trustSourceLines(source));
    return source;
  }
}
