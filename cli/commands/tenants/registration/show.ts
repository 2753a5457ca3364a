import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { fields } from '../../../format.js';

export default class TenantsRegistrationShow extends BaseCommand<typeof TenantsRegistrationShow> {
  static override summary = "Show a tenant's dynamic client registration policy.";
  static override description =
    'The policy as GET /api/admin/tenants/{tenantId}/registration-policy answers it: the mode (closed, the ' +
    'default; initial_access_token; open), the scope ceiling, the open limits, the unused-client and secret ' +
    'lifetimes, the trusted software statement issuers, and the ETag. See docs/registration.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq '.policy.mode'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { view, etag } = await this.services.registration.policy.view(this.flags.tenant);
    this.log(describePolicy(view.policy, etag));
    return { ...view, etag };
  }
}

export function describePolicy(p: Record<string, unknown> & { mode: string }, etag: string): string {
  const limits = p.openLimits as { perIpPerHour: number; perTenantPerDay: number } | undefined;
  const issuers = (p.softwareStatementIssuers as { iss: string }[] | undefined) ?? [];
  return fields([
    ['mode', p.mode],
    [
      'scope ceiling',
      ((p.scopeCeiling as string[] | undefined) ?? ['openid', 'profile', 'email', 'offline_access']).join(' '),
    ],
    [
      'open limits',
      `${limits?.perIpPerHour ?? 10} per IP per hour, ${limits?.perTenantPerDay ?? 100} per tenant per day`,
    ],
    ['unused client ttl', `${(p.unusedClientTtlSeconds as number | undefined) ?? 604_800} s`],
    ['client secret ttl', p.clientSecretTtlSeconds ? `${p.clientSecretTtlSeconds as number} s` : 'never expires'],
    ['statement issuers', issuers.map((i) => i.iss).join(' ') || '(none)'],
    ['etag', etag],
  ]);
}
