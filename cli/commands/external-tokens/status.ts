import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import type { RunRecord } from '../../../shared/services/external-token-refresh/scan.js';

export default class ExternalTokensStatus extends BaseCommand<typeof ExternalTokensStatus> {
  static override summary = 'Show what the upstream token refresh runs did, newest first.';
  static override description =
    'Lists the recent runs of the upstream token scan, scheduled (the `external-token-refresh` job) and manual ' +
    '(`iam external-tokens refresh`): when, which tenants, and the count per outcome: refreshed, skipped_not_due ' +
    '(not due any more, or leased by another scanner), invalid_grant (link marked reauthentication_required), ' +
    'backoff (429/5xx: retried later), circuit_open (upstream skipped) and errors. Records are kept 7 days. ' +
    'See docs/identity-providers.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --limit 5 --json',
  ];
  static override flags = {
    limit: Flags.integer({ description: 'most runs to list', default: 20, min: 1, max: 1000 }),
  };

  async run(): Promise<RunRecord[]> {
    const runs = await this.services.externalTokenRefresh(this.leaseHolder).recentRuns(this.flags.limit);
    this.log(
      table(
        runs,
        [
          { header: 'run', value: (r) => r.id },
          { header: 'trigger', value: (r) => r.trigger_kind },
          { header: 'started', value: (r) => time(r.started_at) },
          { header: 'tenants', value: (r) => r.tenants.join(',') },
          { header: 'refreshed', value: (r) => String(r.refreshed) },
          { header: 'not due', value: (r) => String(r.skipped_not_due) },
          { header: 'invalid_grant', value: (r) => String(r.invalid_grant) },
          { header: 'backoff', value: (r) => String(r.backoff) },
          { header: 'circuit', value: (r) => String(r.circuit_open) },
          { header: 'errors', value: (r) => String(r.errors) },
        ],
        'No refresh runs recorded yet.',
      ),
    );
    return runs;
  }
}
