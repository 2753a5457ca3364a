import { Flags } from '@oclif/core';
import { FAPI_PROFILES } from '../../../../shared/schemas/fapi.js';
import { BaseCommand } from '../../../base.js';
import { showFapiPolicy } from '../../../fapi.js';

export default class TenantsFapiSet extends BaseCommand<typeof TenantsFapiSet> {
  static override summary = "Switch a tenant's FAPI 2.0 profile on (fapi2-security, fapi2-message-signing) or off.";
  static override description =
    'Under the profile every client of the tenant without a fapi_profile of its own must push its requests ' +
    '(PAR), use PKCE S256, authenticate with private_key_jwt, send a DPoP proof with each token request and sign ' +
    'with PS256, ES256 or EdDSA; fapi2-message-signing adds signed request objects and JWT authorization ' +
    'responses. Clients that cannot (a client_secret_basic admin client, say) keep working only with ' +
    '`iam clients update --fapi-profile off`. Stored as PUT /api/admin/tenants/{tenantId}/fapi stores it, ' +
    'audited (tenant.fapi.update). A change made since --if-match was read is refused (precondition_failed). ' +
    'See docs/fapi.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --profile fapi2-security',
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --profile off',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    profile: Flags.string({ description: 'the profile', options: [...FAPI_PROFILES], required: true }),
    'if-match': Flags.string({ description: 'the ETag read before (refused if the profile changed since)' }),
  };
  static override fieldFlags = { profile: 'profile' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = { profile: f.profile };
    this.serviceInput = input;
    const r = await this.services.fapi.update(f.tenant, input, this.actor, {
      ...(f['if-match'] ? { ifMatch: f['if-match'] } : {}),
    });
    this.log(showFapiPolicy(r.view, r.etag));
    return { ...r.view, etag: r.etag };
  }
}
