import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import type { PollOutcome } from '../../../shared/services/federation/metadata-poller.js';

export default class FederationPoll extends BaseCommand<typeof FederationPoll> {
  static override summary = "Poll a federation trust source's metadata now.";
  static override description =
    "Fetches the source's metadataUrl (a conditional GET: an unchanged document answers 304 and keeps the copy), " +
    'verifies the signature against the pinned certificates, and replaces the entity inventory, whatever the ' +
    "source's schedule or polling mode; the same work the daemon's federation-metadata-poll job does. Fails " +
    'with exit 1 when the poll fails, printing sourceState and lastErrorCode (docs/federation.md, "sourceState ' +
    'and what to do"). A source being polled by a daemon at this moment is reported as skipped.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> fts_0123abcd --tenant ten_0123abcd',
    '<%= config.bin %> <%= command.id %> fts_0123abcd --tenant ten_0123abcd --json',
  ];
  static override args = { id: Args.string({ description: 'id of the trust source (fts_…)', required: true }) };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run(): Promise<PollOutcome> {
    await this.requireTenant(this.flags.tenant);
    // The job's poller from the one container: the same byte cap and deadline as the daemon's.
    const poller = this.services.federationPoller;
    if (!this.jsonEnabled()) process.stderr.write('Polling: download, signature check, inventory…\n');
    const o = await poller.pollNow(this.flags.tenant, this.args.id);
    this.log(`${o.result}: sourceState ${o.sourceState ?? '-'}${o.errorCode ? `, lastErrorCode ${o.errorCode}` : ''}`);
    if (o.message) this.log(`  ${o.message}`);
    if (o.entityCount !== null) this.log(`  entities: ${o.entityCount}`);
    if (o.nextRefreshAt) this.log(`  next refresh: ${new Date(o.nextRefreshAt).toISOString()}`);
    if (o.result === 'failed' && !this.jsonEnabled()) this.exit(1);
    return o;
  }
}
