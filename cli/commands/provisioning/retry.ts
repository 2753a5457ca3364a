import { Flags } from '@oclif/core';
import { CliFailure } from '../../base.js';
import { fields, time } from '../../format.js';
import { deriveIdempotencyKey, HttpCommand, withContext } from '../../http/base.js';
import { ServiceError } from '../../http/client.js';
import { errorWithCause, progressPrinter, requireSettled } from '../../provisioning.js';
import type { ProvisioningOperationView, ProvisioningStepView } from '../../../shared/services/provisioning/index.js';

/** The spec's "Provisioning operation" (extensible): the fields shown here. */
interface ProvisioningOperation {
  operation_id: string;
  tenant_id: string;
  operation_kind: string;
  status: string;
  current_step: string;
  attempt_count: number;
  next_attempt_at: number | null;
  last_error_code: string | null;
  /** Added by this service (the record is extensible): the sanitised cause of last_error_code. */
  last_error_cause?: string | null;
  updated_at: number;
  idempotent_replay?: boolean;
  [k: string]: unknown;
}

const show = (op: ProvisioningOperation) =>
  fields([
    ['operation', `${op.operation_id} (${op.operation_kind})`],
    ['status', op.status],
    ['current step', op.current_step],
    ['attempts', String(op.attempt_count)],
    ['last error', op.last_error_code ? errorWithCause(op.last_error_code, op.last_error_cause) : '-'],
    ['next attempt', time(op.next_attempt_at)],
  ]);

export default class ProvisioningRetry extends HttpCommand<typeof ProvisioningRetry> {
  static override summary = "Requeue a tenant's blocked provisioning operation through the admin API.";
  static override description =
    "Shows the tenant's provisioning operation (GET /api/admin/tenants/{id}/provisioning), " +
    'then POSTs /api/admin/tenants/{id}/provisioning/retry. ' +
    'The operation keeps its idempotency, release pins, completed steps and retry history; ' +
    'the service requeues only a blocked operation. ' +
    'No confirmation is asked: a retry only resumes work the operation was already doing. ' +
    'The Idempotency-Key is derived from the tenant, the operation, its attempt count and last error ' +
    'unless --idempotency-key is given, so re-running before the operation moves on replays the ' +
    'first result ("already done (replayed)"). Then, like `iam tenants create`, it shows each step as a daemon ' +
    'runs it and waits until the tenant is active (--no-wait returns at once); blocked again, it exits 1 with ' +
    'provisioning_blocked, naming the step, its error code and the cause. Needs `iam login`. See docs/cli.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --idempotency-key inc-4211-retry --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant whose provisioning is blocked', required: true }),
    'idempotency-key': Flags.string({
      description: 'Idempotency-Key to send (default: derived from the operation as read)',
    }),
    wait: Flags.boolean({
      description: 'wait until the tenant is provisioned (a daemon runs the steps)',
      default: true,
      allowNo: true,
    }),
    'wait-timeout': Flags.integer({
      description: 'seconds to wait, backoff included',
      default: 300,
      min: 1,
      max: 86_400,
    }),
  };

  async run() {
    const api = this.client();
    const base = `/api/admin/tenants/${encodeURIComponent(this.flags.tenant)}/provisioning`;
    let op: ProvisioningOperation;
    try {
      const got = await api.get<ProvisioningOperation & { operation?: ProvisioningOperation }>(base);
      // The spec shape is the operation itself; tolerate it wrapped in `operation`.
      op = typeof got.operation_id === 'string' ? got : (got.operation ?? got);
    } catch (e) {
      if (e instanceof ServiceError && e.status === 404) {
        throw new CliFailure(
          'not_found',
          `--tenant: no provisioning operation for tenant "${this.flags.tenant}" (or no such tenant)`,
        );
      }
      throw e;
    }
    this.note(`Provisioning of tenant ${op.tenant_id}\n${show(op)}`);
    const key =
      this.flags['idempotency-key'] ??
      deriveIdempotencyKey(['provisioning retry', op.tenant_id, op.operation_id, op.attempt_count, op.last_error_code]);
    this.note(`Idempotency key: ${key} (re-run with --idempotency-key ${key} to reuse it)`);
    let after: ProvisioningOperation;
    try {
      after = await api.post<ProvisioningOperation>(`${base}/retry`, undefined, key);
    } catch (e) {
      throw e instanceof CliFailure ? withContext(e, { idempotency_key: key }) : e;
    }
    this.log(
      after.idempotent_replay ? 'Already done (replayed):' : `Requeued provisioning of tenant ${after.tenant_id}:`,
    );
    if (!this.flags.wait) {
      this.log(show(after));
      return { ...after, idempotency_key: key };
    }
    const done = await this.waitFor(base, after);
    this.log(show(done));
    requireSettled({ ...done, last_error_cause: done.last_error_cause ?? null }, this.flags['wait-timeout']);
    return { ...done, idempotency_key: key };
  }

  /** Polls the operation until it completes, blocks again, or the wait runs out; prints each step change. */
  private async waitFor(path: string, first: ProvisioningOperation): Promise<ProvisioningOperation> {
    const api = this.client();
    const print = progressPrinter(!this.jsonEnabled());
    const seen = new Map<string, string>();
    const report = (op: ProvisioningOperation) => {
      for (const s of (op.steps ?? []) as ProvisioningStepView[]) {
        const sig = `${s.status}:${s.attempt_count}`;
        if (seen.get(s.step_key) !== sig) {
          seen.set(s.step_key, sig);
          print?.(op as unknown as ProvisioningOperationView, s);
        }
      }
    };
    const end = Date.now() + this.flags['wait-timeout'] * 1000;
    let op = first;
    report(op);
    while (op.status !== 'completed' && op.status !== 'blocked' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 250));
      op = await api.get<ProvisioningOperation>(path);
      report(op);
    }
    return op;
  }
}
