import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { time } from '../../format.js';
import { describeRecovery } from '../../recovery.js';

export default class RecoveryVerify extends BaseCommand<typeof RecoveryVerify> {
  static override summary = 'Verify a restored tenant: migrations, lookup reprojection, three binding smoke checks.';
  static override description =
    'Runs against the database, in order, and records each result on the operation:\n' +
    '  1. migrations: every migration of this release is applied, matching the manifest recorded at start;\n' +
    "  2. lookup reprojection: the tenant's lookup rows (each client_id and user id) are rebuilt in keyset batches " +
    '(stage scan), counted back against their sources (verify), rows of abandoned generations removed (cleanup); a ' +
    'sha256 digest of the rows is pinned. The cursor is saved after every batch, so an interrupted run resumes ' +
    'where it stopped;\n' +
    '  3. three binding smoke checks: read the tenant and its clients, write and read back a probe row in a ' +
    'rolled-back transaction, sign and verify a JWS with the active signing key.\n' +
    'When all pass, the operation is stabilizing until now + IAM_RECOVERY_STABILIZATION_SECONDS. A progress line ' +
    'per batch goes to stderr. One verify runs at a time (a lease). Running it again after success rebuilds the ' +
    'projection and restarts the stabilization interval.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --operation dr_ten_123_1',
    {
      description: 'Smaller batches on a busy database.',
      command: '<%= config.bin %> <%= command.id %> --operation dr_ten_123_1 --batch-size 100',
    },
  ];
  static override flags = {
    operation: Flags.string({ description: 'the recovery operation id (dr_<tenant>_<n>)', required: true }),
    'batch-size': Flags.integer({
      description: 'rows per reprojection batch (one transaction each)',
      default: 500,
      min: 1,
      max: 10_000,
    }),
  };

  async run() {
    const service = this.services.recovery;
    const { recovery, smokeChecks } = await service.verify(
      this.flags.operation,
      {
        batchSize: this.flags['batch-size'],
        stabilizationSeconds: this.settings.recoveryStabilizationSeconds,
        onProgress: (p) =>
          process.stderr.write(
            `lookup ${p.stage} batch ${p.batch}: ${p.rows} rows${p.stage === 'cleanup' ? ' removed' : ''} ` +
              `(projected ${p.projectedRows}, verified ${p.verifiedRows})\n`,
          ),
        onStep: (step, ok, detail) => {
          if (!this.jsonEnabled()) this.log(`${ok ? 'ok  ' : 'FAIL'} ${step}: ${detail}`);
          else process.stderr.write(`${ok ? 'ok' : 'FAIL'} ${step}: ${detail}\n`);
        },
      },
      this.actor,
    );
    const { details } = await service.get(recovery.operationId, this.settings.recoveryStabilizationSeconds);
    this.log(
      `Verified ${recovery.operationId}; reactivation may proceed from ${time(details.stabilizationNotBefore)}.`,
    );
    this.log(describeRecovery(recovery, details));
    return { recovery, smokeChecks, stabilizationNotBefore: details.stabilizationNotBefore };
  }
}
