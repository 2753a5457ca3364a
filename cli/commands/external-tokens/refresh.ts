import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields } from '../../format.js';
import { OUTCOMES, type RunSummary } from '../../../shared/services/external-token-refresh/scan.js';

export default class ExternalTokensRefresh extends BaseCommand<typeof ExternalTokensRefresh> {
  static override summary = "Refresh a tenant's due upstream tokens now (the exact manual run of the scan).";
  static override description =
    "Runs the scheduled scan's own code for one tenant (or one user of it) now, whether or not the tenant's " +
    'external token refresh configuration is enabled: every upstream identity link whose access token expires ' +
    'within refreshThresholdSeconds is leased, refreshed at its upstream token endpoint and stored sealed, at ' +
    'most batchSize links. Safe beside running daemons: each link is leased, so it is refreshed once. Shows a ' +
    'line per link as it goes, then the counts per outcome (refreshed, skipped_not_due, invalid_grant, backoff, ' +
    'circuit_open, errors), which are also recorded for `iam external-tokens status`. See docs/identity-providers.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --user usr_0123abcd --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant whose upstream tokens to refresh', required: true }),
    user: Flags.string({ description: "only this user's links" }),
  };

  async run(): Promise<RunSummary> {
    await this.requireTenant(this.flags.tenant);
    const json = this.jsonEnabled();
    const summary = await this.services.externalTokenRefresh(this.leaseHolder).runTenant(this.flags.tenant, {
      userId: this.flags.user,
      // Progress on stderr, so stdout stays the summary (and pure JSON under --json).
      progress: json ? undefined : (e) => process.stderr.write(`  ${e.linkId}: ${e.outcome}\n`),
    });
    this.log(
      `Refresh run ${summary.id} for tenant ${this.flags.tenant}` +
        `${this.flags.user ? `, user ${this.flags.user}` : ''}\n` +
        fields(OUTCOMES.map((o) => [o, String(summary[o])])),
    );
    return summary;
  }
}
