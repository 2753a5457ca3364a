import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { table, time } from '../../format.js';

export default class FederationList extends BaseCommand<typeof FederationList> {
  static override summary = "List a tenant's federation trust sources with their polling state.";
  static override description =
    'One line per source: its state as the metadata poller last saw it (sourceState; see docs/federation.md for ' +
    'what each means and what to do), the last successful refresh and the next one.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --json | ' +
      "jq '.[] | {sourceKey, state: .protocolPayload.polling.sourceState}'",
  ];
  static override flags = {
    tenant: tenantFlag,
    limit: Flags.integer({ description: 'most sources to list', default: 100, min: 1, max: 500 }),
    offset: Flags.integer({ description: 'sources to skip', default: 0, min: 0 }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const sources = await this.services.fieldMapping.trustSources.list(
      this.flags.tenant,
      this.flags.limit,
      this.flags.offset,
    );
    const poll = (s: (typeof sources)[number]) => s.protocolPayload.polling as Record<string, unknown>;
    this.log(
      table(
        sources,
        [
          { header: 'id', value: (s) => s.id },
          { header: 'key', value: (s) => s.sourceKey },
          { header: 'type', value: (s) => s.sourceType },
          { header: 'lifecycle', value: (s) => s.lifecycleState },
          { header: 'state', value: (s) => String(poll(s).sourceState) },
          { header: 'polling', value: (s) => `${String(poll(s).mode)}/${String(poll(s).intervalSeconds)}s` },
          { header: 'last success', value: (s) => time(poll(s).lastSuccessAt as number | undefined) },
          { header: 'name', value: (s) => s.displayName },
        ],
        `No federation trust sources in tenant ${this.flags.tenant}.`,
      ),
    );
    return sources;
  }
}
