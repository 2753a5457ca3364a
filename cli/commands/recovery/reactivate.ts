import { Flags } from '@oclif/core';
import { CliFailure } from '../../base.js';
import { fields, time } from '../../format.js';
import { deriveIdempotencyKey, HttpCommand, usage, withContext } from '../../http/base.js';
import { ServiceError } from '../../http/client.js';
import { readLine } from '../../http/prompt.js';

/** The spec's "Tenant recovery operation" `recovery` object: the fields shown here. */
interface Recovery {
  operationId: string;
  tenantId: string;
  state: string;
  pinnedRouteGeneration: number;
  lastErrorCode: string | null;
  reactivatedAt: number | null;
  reactivatedRuntimeGeneration: number | null;
  canCancel: boolean;
  canConfirmRestore: boolean;
  canVerify: boolean;
  canReactivate: boolean;
  updatedAt: number;
  [k: string]: unknown;
}

export const confirmationFor = (tenantId: string) => `REACTIVATE_RECOVERED_TENANT:${tenantId}`;

const show = (r: Recovery) =>
  fields([
    ['operation', r.operationId],
    ['tenant', r.tenantId],
    ['state', r.state],
    ['route generation', String(r.pinnedRouteGeneration)],
    ['last error', r.lastErrorCode ?? '-'],
    [
      'reactivated',
      r.reactivatedAt === null
        ? '-'
        : `${time(r.reactivatedAt)} (runtime generation ${r.reactivatedRuntimeGeneration ?? '-'})`,
    ],
    [
      'can',
      (['canCancel', 'canConfirmRestore', 'canVerify', 'canReactivate'] as const).map((k) => `${k}=${r[k]}`).join(' '),
    ],
  ]);

export default class RecoveryReactivate extends HttpCommand<typeof RecoveryReactivate> {
  static override summary =
    'Reactivate a recovered tenant: publish its pinned route generation as active (disaster recovery).';
  static override description =
    'Shows the recovery operation (GET /api/admin/platform/control-plane/tenant-recovery/{operationId}): tenant, ' +
    'state and the can* flags. ' +
    'Then you must TYPE the confirmation string REACTIVATE_RECOVERED_TENANT:{tenantId}; a mismatch aborts before ' +
    'anything is sent. ' +
    'Scripts pass it with --confirm (checked the same way); --json never prompts, so without --confirm it is a ' +
    'usage error. ' +
    'Nothing is sent when the service reports canReactivate=false and the operation was not reactivated before. ' +
    'Then POSTs …/{operationId}/reactivate with {confirmation}. The Idempotency-Key is derived from the operation, ' +
    'tenant and confirmation ' +
    'unless --idempotency-key is given, so re-running after a lost response replays the result ("already done ' +
    '(replayed)"). ' +
    'Needs `iam login` with scope iam.platform. See docs/cli.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --operation dr_ten_0123abcd_1',
    {
      description: 'In a script: the confirmation as a flag.',
      command:
        '<%= config.bin %> <%= command.id %> --operation dr_ten_0123abcd_1 --confirm ' +
        'REACTIVATE_RECOVERED_TENANT:ten_0123abcd --json',
    },
  ];
  static override flags = {
    operation: Flags.string({ description: 'the disaster-recovery operation id', required: true }),
    confirm: Flags.string({
      description: 'the confirmation string REACTIVATE_RECOVERED_TENANT:{tenantId}, instead of typing it',
    }),
    'idempotency-key': Flags.string({
      description: 'Idempotency-Key to send (default: derived from the operation, tenant and confirmation)',
    }),
  };

  async run() {
    // Before anything else (even reading the login): a script must never hang on a prompt.
    if (this.jsonEnabled() && this.flags.confirm === undefined) {
      throw usage(
        'confirmation_required',
        '--json never prompts: pass --confirm REACTIVATE_RECOVERED_TENANT:{tenantId}',
      );
    }
    const api = this.client();
    const path = `/api/admin/platform/control-plane/tenant-recovery/${encodeURIComponent(this.flags.operation)}`;
    let recovery: Recovery;
    try {
      recovery = (await api.get<{ recovery: Recovery }>(path)).recovery;
    } catch (e) {
      if (e instanceof ServiceError && e.status === 404)
        throw new CliFailure('not_found', `--operation: no recovery operation "${this.flags.operation}"`);
      throw e;
    }
    this.note(`Tenant recovery operation\n${show(recovery)}`);
    if (!recovery.canReactivate && recovery.reactivatedAt === null) {
      throw withContext(
        new CliFailure(
          'not_ready',
          `the service reports canReactivate=false (state ${recovery.state}, last error ` +
            `${recovery.lastErrorCode ?? 'none'}): finish the earlier recovery steps first; nothing was sent`,
        ),
        { state: recovery.state, lastErrorCode: recovery.lastErrorCode },
      );
    }

    const expected = confirmationFor(recovery.tenantId);
    const confirmation =
      this.flags.confirm ?? (await readLine(`Type ${expected} to reactivate tenant ${recovery.tenantId}: `));
    // Checked here so a typo sends nothing; the service checks the same string again (422).
    if (confirmation !== expected) {
      throw new CliFailure(
        'confirmation_mismatch',
        `${this.flags.confirm === undefined ? 'the typed confirmation' : '--confirm'} does not match ${expected}: ` +
          `nothing was sent`,
      );
    }

    const key =
      this.flags['idempotency-key'] ??
      deriveIdempotencyKey(['recovery reactivate', recovery.operationId, recovery.tenantId, confirmation]);
    this.note(`Idempotency key: ${key} (re-run with --idempotency-key ${key} to reuse it)`);
    let res: { recovery: Recovery; auditId: string; idempotent_replay?: boolean };
    try {
      res = await api.post(`${path}/reactivate`, { confirmation }, key);
    } catch (e) {
      if (e instanceof ServiceError && e.code === 'confirmation_mismatch') {
        throw withContext(
          new CliFailure(
            'confirmation_mismatch',
            `the service rejected the confirmation (${e.message}); re-run to read the operation again`,
          ),
          { idempotency_key: key },
        );
      }
      throw e instanceof CliFailure ? withContext(e, { idempotency_key: key }) : e;
    }
    this.log(
      res.idempotent_replay
        ? 'Already done (replayed):'
        : `Reactivated tenant ${res.recovery.tenantId} (audit ${res.auditId}):`,
    );
    this.log(show(res.recovery));
    return { ...res, idempotency_key: key };
  }
}
