import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { describeRecovery } from '../../recovery.js';

export default class RecoveryShow extends BaseCommand<typeof RecoveryShow> {
  static override summary = 'Show a recovery operation, its progress and what can be done next.';
  static override description =
    'Prints every recorded step of the operation (the spec\'s Tenant recovery operation under "recovery", ' +
    'and the restore reference, smoke check results and stabilization deadline under "details"), and the ' +
    'last error with its cause (the kind of failure, never a secret).';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --operation dr_ten_123_1',
    '<%= config.bin %> <%= command.id %> --operation dr_ten_123_1 --json | jq .recovery.lookupReprojection',
  ];
  static override flags = {
    operation: Flags.string({ description: 'the recovery operation id (dr_<tenant>_<n>)', required: true }),
  };

  async run() {
    const service = this.services.recovery;
    const { recovery, details } = await service.get(this.flags.operation, this.settings.recoveryStabilizationSeconds);
    this.log(describeRecovery(recovery, details));
    return { recovery, details };
  }
}
