import { Errors, Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showClientMetadataPolicy } from '../../../client-metadata.js';

export default class TenantsClientMetadataDocumentsSet extends BaseCommand<typeof TenantsClientMetadataDocumentsSet> {
  static override summary = "Change a tenant's client ID metadata document policy.";
  static override description =
    'Changes what the flags name and keeps the rest; stored as PUT ' +
    '/api/admin/tenants/{tenantId}/client-metadata-documents stores it, audited ' +
    '(tenant.client_metadata_policy.update). A host is an exact host name (with :port if the URL has one) or ' +
    '*.suffix (any host below it); a denied host wins over an allowed one; with no allowed host, any public host ' +
    'may serve documents. A change made by someone else between the read and the write is refused ' +
    '(precondition_failed), as is one made since --if-match was read. See docs/client-metadata-documents.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --enable',
    {
      description: 'Only documents served by hosts under agents.example.com, never by one of them.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --enable --allow-host "*.agents.example.com" ' +
        '--deny-host old.agents.example.com',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    enable: Flags.boolean({ description: 'accept metadata document clients', exclusive: ['disable'] }),
    disable: Flags.boolean({ description: 'refuse every metadata document client' }),
    'allow-host': Flags.string({
      description: 'a host that may serve documents (repeatable; replaces the list)',
      multiple: true,
    }),
    'deny-host': Flags.string({
      description: 'a host that may not serve documents (repeatable; replaces the list)',
      multiple: true,
    }),
    'clear-allow': Flags.boolean({ description: 'no allow list (any public host)', exclusive: ['allow-host'] }),
    'clear-deny': Flags.boolean({ description: 'no deny list', exclusive: ['deny-host'] }),
    'if-match': Flags.string({ description: 'the ETag read before (refused if the policy changed since)' }),
  };
  static override fieldFlags = { enabled: 'enable', allowHosts: 'allow-host', denyHosts: 'deny-host' };

  async run() {
    const f = this.flags;
    if (!f.enable && !f.disable && !f['allow-host'] && !f['deny-host'] && !f['clear-allow'] && !f['clear-deny'])
      throw new Errors.CLIError(
        'give at least one of --enable, --disable, --allow-host, --deny-host, --clear-allow, --clear-deny',
        { exit: 2 },
      );
    await this.requireTenant(f.tenant);
    const { view, etag } = await this.services.clientMetadata.policy.view(f.tenant);
    const next = {
      enabled: f.enable ? true : f.disable ? false : view.policy.enabled,
      allowHosts: f['clear-allow'] ? [] : (f['allow-host'] ?? view.policy.allowHosts),
      denyHosts: f['clear-deny'] ? [] : (f['deny-host'] ?? view.policy.denyHosts),
    };
    this.serviceInput = next;
    const r = await this.services.clientMetadata.policy.update(f.tenant, next, this.actor, {
      ifMatch: f['if-match'] ?? etag,
    });
    this.log(showClientMetadataPolicy(r.view, r.etag));
    return { ...r.view, etag: r.etag };
  }
}
