import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showAuthorizationRequestPolicy } from '../../../authorization-requests.js';

export default class TenantsAuthorizationRequestsSet extends BaseCommand<typeof TenantsAuthorizationRequestsSet> {
  static override summary = "Change a tenant's authorization request policy: require pushed requests (PAR) or not.";
  static override description =
    'With --require-par every client of the tenant must push its authorization requests (POST /par, RFC 9126 ' +
    '§5); a plain /authorize is refused with invalid_request. --no-require-par leaves it to each client ' +
    '(require_pushed_authorization_requests, `iam clients update --require-par`). Stored as PUT ' +
    '/api/admin/tenants/{tenantId}/authorization-requests stores it, audited ' +
    '(tenant.authorization_requests.update). A change made since --if-match was read is refused ' +
    '(precondition_failed). See docs/par.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --require-par',
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --no-require-par',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    'require-par': Flags.boolean({
      description: 'every client must push its requests; --no-require-par lifts it',
      allowNo: true,
      required: true,
    }),
    'if-match': Flags.string({ description: 'the ETag read before (refused if the policy changed since)' }),
  };
  static override fieldFlags = { requirePushed: 'require-par' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = { requirePushed: f['require-par'] };
    this.serviceInput = input;
    const r = await this.services.par.policy.update(f.tenant, input, this.actor, {
      ...(f['if-match'] ? { ifMatch: f['if-match'] } : {}),
    });
    this.log(showAuthorizationRequestPolicy(r.view, r.etag));
    return { ...r.view, etag: r.etag };
  }
}
