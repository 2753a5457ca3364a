import { Errors, Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showDpopPolicy } from '../../../dpop.js';

export default class TenantsDpopSet extends BaseCommand<typeof TenantsDpopSet> {
  static override summary = "Change a tenant's DPoP policy: server nonces, proofs required.";
  static override description =
    'Changes the fields named by flags and keeps the other; stored as PUT ' +
    '/api/admin/tenants/{tenantId}/dpop-policy stores them, audited (tenant.dpop_policy.update). ' +
    '--require-nonce: proofs must carry a DPoP-Nonce this service provided (RFC 9449 §8, §9). ' +
    "--require-dpop: every token request of the tenant's clients must carry a DPoP proof. Other daemons " +
    'follow within 5 seconds. A change made by someone else between the read and the write is refused ' +
    '(precondition_failed), as is one made since --if-match was read. See docs/dpop.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --require-dpop --require-nonce',
    {
      description: 'Nonces no longer required.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --no-require-nonce',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    'require-nonce': Flags.boolean({ description: 'proofs must carry a server nonce', allowNo: true }),
    'require-dpop': Flags.boolean({ description: 'every token request must carry a DPoP proof', allowNo: true }),
    'if-match': Flags.string({ description: 'the ETag read before (refused if the policy changed since)' }),
  };
  static override fieldFlags = { requireNonce: 'require-nonce', requireDpop: 'require-dpop' };

  async run() {
    const f = this.flags;
    if (f['require-nonce'] === undefined && f['require-dpop'] === undefined)
      throw new Errors.CLIError('give at least one of --[no-]require-nonce, --[no-]require-dpop', { exit: 2 });
    await this.requireTenant(f.tenant);
    const { view, etag } = await this.services.dpop.view(f.tenant);
    const next: Record<string, boolean> = { ...view.policy };
    if (f['require-nonce'] !== undefined) next.requireNonce = f['require-nonce'];
    if (f['require-dpop'] !== undefined) next.requireDpop = f['require-dpop'];
    this.serviceInput = next;
    const r = await this.services.dpop.update(f.tenant, next, this.actor, { ifMatch: f['if-match'] ?? etag });
    this.log(showDpopPolicy(r.view, r.etag));
    return { ...r.view, etag: r.etag };
  }
}
