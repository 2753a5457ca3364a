import { writeFileSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';

export default class TenantsExport extends BaseCommand<typeof TenantsExport> {
  static override summary = "Write a tenant's directory to a JSON file (the offboarding export).";
  static override description =
    'One JSON document (format iam.tenant-export.v1): the tenant, its users with their standard claims, its ' +
    'clients, custom claim schemas and upstream identity providers, without any secret. The file is written ' +
    'with mode 0600: it holds personal data. Audited (tenant.export). See docs/tenant-lifecycle.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --output acme.json',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --output acme.json --json | jq '.users'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    output: Flags.string({ char: 'o', description: 'the file to write (replaced if it exists)', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const doc = await this.services.tenantDirectory.export(this.flags.tenant, this.actor);
    writeFileSync(this.flags.output, JSON.stringify(doc, null, 2) + '\n', { mode: 0o600 });
    const counts = {
      users: doc.users.length,
      clients: doc.clients.length,
      claim_schemas: doc.claim_schemas.length,
      upstream_idps: doc.upstream_idps.length,
    };
    this.log(
      `Wrote ${this.flags.output}: ${counts.users} users, ${counts.clients} clients, ` +
        `${counts.claim_schemas} claim schemas, ${counts.upstream_idps} upstream identity providers`,
    );
    return { tenant_id: doc.tenant.id, output: this.flags.output, ...counts };
  }
}
