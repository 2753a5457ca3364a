import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields } from '../../format.js';

export default class TenantsSetPolicyVersions extends BaseCommand<typeof TenantsSetPolicyVersions> {
  static override summary = 'Set the policy versions recorded with every consent given in a tenant.';
  static override description =
    `Sets the privacy policy and terms of service versions of a tenant, kept in its settings ` +
    `document. Every consent given from now on records them, and the user's list of consents ` +
    `(GET /api/user/consents) shows them as policyVersions. Consents already given keep the ` +
    `versions they were given under until the user grants again.\n` +
    `\n` +
    `The two versions are replaced together: a flag left out clears that version, and with neither ` +
    `flag consents record no versions. A version is 1 to 64 characters. The change is audited ` +
    `(tenant.policy_versions.update).`;
  static override examples = [
    {
      description: 'Both documents were revised.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --privacy-policy-version 2026-11 --tos-version 7',
    },
    {
      description: 'Stop recording versions.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    'privacy-policy-version': Flags.string({ description: 'version of the privacy policy users accept' }),
    'tos-version': Flags.string({ description: 'version of the terms of service users accept' }),
  };
  static override fieldFlags = {
    privacy_policy_version: 'privacy-policy-version',
    tos_version: 'tos-version',
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = {
      ...(f['privacy-policy-version'] !== undefined ? { privacy_policy_version: f['privacy-policy-version'] } : {}),
      ...(f['tos-version'] !== undefined ? { tos_version: f['tos-version'] } : {}),
    };
    this.serviceInput = input;
    const v = await this.services.directory.setPolicyVersions(f.tenant, input, this.actor);
    this.log(`Policy versions of tenant ${f.tenant}`);
    this.log(
      fields([
        ['privacy policy', v.privacyPolicyVersion ?? '(none)'],
        ['terms of service', v.tosVersion ?? '(none)'],
      ]),
    );
    return { tenant_id: f.tenant, policyVersions: v };
  }
}
