import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { describeRecovery } from '../../recovery.js';

export default class RecoveryConfirmRestore extends BaseCommand<typeof RecoveryConfirmRestore> {
  static override summary = "Record that the tenant's data has been restored, and from which backup.";
  static override description =
    'Moves the operation from awaiting_restore to restore_confirmed and records the restore reference (a backup ' +
    'identifier such as a snapshot name; not a secret). Refused before the deny has drained (drainNotBefore, about ' +
    '11 s after start): wait and run it again.\n\n' +
    'Next: `iam recovery verify`. See docs/recovery.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --operation dr_ten_123_1 --restore-reference snap-2026-11-21T23:00Z',
  ];
  static override flags = {
    operation: Flags.string({ description: 'the recovery operation id (dr_<tenant>_<n>)', required: true }),
    'restore-reference': Flags.string({ description: 'identifier of the backup that was restored', required: true }),
  };
  static override fieldFlags = { restore_reference: 'restore-reference' };

  async run() {
    const service = this.services.recovery;
    const recovery = await service.confirmRestore(this.flags.operation, this.flags['restore-reference'], this.actor);
    this.log(`Restore confirmed for ${recovery.operationId}.`);
    this.log(describeRecovery(recovery));
    return { recovery };
  }
}
