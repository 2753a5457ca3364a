import { readFileSync } from 'node:fs';
import { Errors, Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { describePolicy } from './show.js';

export default class TenantsRegistrationSet extends BaseCommand<typeof TenantsRegistrationSet> {
  static override summary = "Change a tenant's dynamic client registration policy.";
  static override description =
    'Changes the fields named by flags and keeps the others; stored as PUT ' +
    '/api/admin/tenants/{tenantId}/registration-policy stores it, audited (tenant.registration_policy.update). ' +
    'open admits anonymous registrations of public or private_key_jwt clients within the scope ceiling and ' +
    'the limits; initial_access_token needs a token from `iam registration tokens create`. A change made by ' +
    'someone else between the read and the write is refused (precondition_failed). See docs/registration.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --mode open --scope-ceiling "openid email mcp:tools"',
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --mode initial_access_token --client-secret-ttl 7776000',
    {
      description:
        'Trust software statements from the issuers in a JSON file ([{ "iss": …, "jwks": { "keys": […] } }]).',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --statement-issuers issuers.json',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    mode: Flags.string({
      description: 'closed, initial_access_token or open',
      options: ['closed', 'initial_access_token', 'open'],
    }),
    'scope-ceiling': Flags.string({ description: 'the scopes a registered client may hold, space-separated' }),
    'per-ip-per-hour': Flags.integer({ description: 'anonymous registrations per client IP per hour (open)', min: 1 }),
    'per-tenant-per-day': Flags.integer({
      description: 'anonymous registrations per day in the tenant (open)',
      min: 1,
    }),
    'unused-client-ttl': Flags.integer({
      description: 'seconds before an unused anonymous client is deleted (0: never)',
      min: 0,
    }),
    'client-secret-ttl': Flags.integer({
      description: "seconds a registered client's secret lives (0: never expires)",
      min: 0,
    }),
    'statement-issuers': Flags.string({ description: 'a JSON file of trusted software statement issuers' }),
  };
  static override fieldFlags = {
    mode: 'mode',
    scopeCeiling: 'scope-ceiling',
    unusedClientTtlSeconds: 'unused-client-ttl',
    clientSecretTtlSeconds: 'client-secret-ttl',
    softwareStatementIssuers: 'statement-issuers',
  };

  async run() {
    const f = this.flags;
    const named = [
      'mode',
      'scope-ceiling',
      'per-ip-per-hour',
      'per-tenant-per-day',
      'unused-client-ttl',
      'client-secret-ttl',
      'statement-issuers',
    ] as const;
    if (named.every((k) => f[k] === undefined))
      throw new Errors.CLIError(`give at least one of ${named.map((k) => `--${k}`).join(', ')}`, { exit: 2 });
    await this.requireTenant(f.tenant);
    const { view, etag } = await this.services.registration.policy.view(f.tenant);
    const next: Record<string, unknown> = { ...view.policy };
    if (f.mode !== undefined) next.mode = f.mode;
    if (f['scope-ceiling'] !== undefined) next.scopeCeiling = f['scope-ceiling'].split(/[\s,]+/).filter(Boolean);
    if (f['per-ip-per-hour'] !== undefined || f['per-tenant-per-day'] !== undefined)
      next.openLimits = {
        ...view.policy.openLimits,
        ...(f['per-ip-per-hour'] !== undefined ? { perIpPerHour: f['per-ip-per-hour'] } : {}),
        ...(f['per-tenant-per-day'] !== undefined ? { perTenantPerDay: f['per-tenant-per-day'] } : {}),
      };
    if (f['unused-client-ttl'] !== undefined) next.unusedClientTtlSeconds = f['unused-client-ttl'];
    if (f['client-secret-ttl'] !== undefined) next.clientSecretTtlSeconds = f['client-secret-ttl'];
    if (f['statement-issuers'] !== undefined) next.softwareStatementIssuers = readJson(f['statement-issuers']);
    this.serviceInput = next;
    const r = await this.services.registration.policy.update(f.tenant, next, this.actor, { ifMatch: etag });
    this.log(describePolicy(r.view.policy, r.etag));
    return { ...r.view, etag: r.etag };
  }
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (e) {
    throw new Errors.CLIError(`--statement-issuers: cannot read ${path} as JSON: ${(e as Error).message}`, { exit: 2 });
  }
}
