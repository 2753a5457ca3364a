import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { describeRecovery } from '../../recovery.js';

export default class RecoveryCancel extends BaseCommand<typeof RecoveryCancel> {
  static override summary = 'Cancel an open recovery operation and put the tenant back as it was.';
  static override description =
    'Restores nothing: the tenant gets back the lifecycle state it had before start (active or suspended), its ' +
    'route is published active again (a new signed route publication), and lookup rows projected by this operation ' +
    'are removed. Only before reactivation, and not while a verify is running.';
  static override examples = ['<%= config.bin %> <%= command.id %> --operation dr_ten_123_1'];
  static override flags = {
    operation: Flags.string({ description: 'the recovery operation id (dr_<tenant>_<n>)', required: true }),
  };

  async run() {
    const service = this.services.recovery;
    const recovery = await service.cancel(this.flags.operation, this.actor);
    this.log(`Cancelled ${recovery.operationId}; tenant ${recovery.tenantId} is back in service.`);
    this.log(describeRecovery(recovery));
    return { recovery };
  }
}
