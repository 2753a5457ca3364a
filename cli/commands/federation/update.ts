import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { ApiError } from '../../../shared/errors.js';
import {
  certificatesFromFlags,
  payloadFromFlags,
  tenantFlag,
  trustSourceFlags,
  trustSourceLines,
} from '../../federation.js';

export default class FederationUpdate extends BaseCommand<typeof FederationUpdate> {
  static override summary = 'Change a federation trust source; the poller starts over with it.';
  static override description =
    'Changes only what the flags name. The update is refused (conflict, with currentUpdatedAt) when the source ' +
    'changed since --expected-updated-at, the updatedAt you read with `iam federation show`; without it the ' +
    'value read just before the update is used. Every update resets the poller state (validators, failure ' +
    'counter, sourceState) and makes the source due at once. See docs/federation.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> edugain --tenant ten_123 --interval 7200 --expected-updated-at 1764000000000',
    '<%= config.bin %> <%= command.id %> edugain --tenant ten_123 --cert-file new-signer.pem --json',
  ];
  static override args = { source: Args.string({ description: 'source id or sourceKey', required: true }) };
  static override flags = {
    tenant: tenantFlag,
    key: Flags.string({ description: 'new sourceKey' }),
    'expected-updated-at': Flags.integer({ description: 'the updatedAt you last read (optimistic concurrency)' }),
    ...trustSourceFlags,
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const service = this.services.fieldMapping.trustSources;
    const current = await service.get(this.flags.tenant, this.args.source);
    const input = {
      expectedUpdatedAt: this.flags['expected-updated-at'] ?? current.updatedAt,
      sourceKey: this.flags.key,
      displayName: this.flags.name,
      sourceType: this.flags.type,
      lifecycleState: this.flags.lifecycle,
      protocolPayload: payloadFromFlags(this.flags, current.protocolPayload),
      certificates: certificatesFromFlags(this.flags['cert-file']),
    };
    let result;
    try {
      ({ result } = await service.update(this.flags.tenant, current.id, input, this.actor));
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && typeof e.extra.currentUpdatedAt === 'number') {
        const f = new CliFailure(
          'conflict',
          `--expected-updated-at: the source changed since (its updatedAt is now ${e.extra.currentUpdatedAt}); ` +
            'read it again with `iam federation show` and retry.',
        );
        f.context = { currentUpdatedAt: e.extra.currentUpdatedAt };
        throw f;
      }
      throw e;
    }
    this.log(`Updated federation trust source ${result.id}; its poller state was reset.`);
    this.log(trustSourceLines(result));
    return result;
  }
}
