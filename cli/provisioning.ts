/** What `iam tenants create` and `iam provisioning retry` share: progress lines and the outcome. */
import type { ProgressListener, ProvisioningOperationView } from '../shared/services/provisioning/index.js';
import { CliFailure } from './base.js';

/** An error code with its sanitised cause, as the operator reads it: `code: cause`, or the code alone. */
export function errorWithCause(code: string | null | undefined, cause: string | null | undefined): string {
  if (!code) return 'none';
  return cause ? `${code}: ${cause}` : code;
}

/** What `iam tenants create` answers of its provisioning operation unless asked for all of it (--verbose). */
export interface ProvisioningSummary {
  operation_id: string;
  /** The operation's status: completed, queued, running, retry_scheduled, blocked. */
  state: string;
  current_step: string;
  steps_done: number;
  steps_total: number;
  /** From the operation's creation to its completion; null while it is not completed. */
  duration_ms: number | null;
}

export function provisioningSummary(op: ProvisioningOperationView): ProvisioningSummary {
  return {
    operation_id: op.operation_id,
    state: op.status,
    current_step: op.current_step,
    steps_done: op.steps.filter((s) => s.status === 'completed').length,
    steps_total: op.steps.length,
    duration_ms: op.completed_at === null ? null : op.completed_at - op.created_at,
  };
}

/**
 * One stderr line per step change (stdout stays for the result, and for --json). With `all`
 * false only the changes an operator must see while waiting: a failure, a retry, a block.
 */
export function progressPrinter(enabled: boolean, opts: { all?: boolean } = {}): ProgressListener | undefined {
  if (!enabled) return undefined;
  const all = opts.all ?? true;
  return (_op, s) => {
    if (!all && !s.last_error_code && s.status !== 'blocked') return;
    let line = `  ${s.step_key}: ${s.status}`;
    if (s.status === 'completed' && s.observed_resource_id) line += ` (${s.observed_resource_id})`;
    if (s.last_error_code && s.status !== 'completed') line += ` (${s.last_error_code}, attempt ${s.attempt_count})`;
    if (s.status === 'retry_scheduled' && s.next_attempt_at) {
      const secs = Math.max(0, s.next_attempt_at - Date.now()) / 1000;
      line += `; retrying in ${secs < 10 ? secs.toFixed(1) : Math.round(secs)} s`;
    }
    process.stderr.write(`${line}\n`);
  };
}

/**
 * Turns a finished wait into the command's outcome: a blocked or unfinished operation is a
 * failure, whose message (and --json error object) carries the last error code and its cause.
 */
export function requireSettled(
  op: Pick<
    ProvisioningOperationView,
    'status' | 'tenant_id' | 'operation_id' | 'current_step' | 'last_error_code' | 'last_error_cause'
  >,
  timeoutSeconds: number,
): void {
  if (op.status === 'completed') return;
  const context = {
    operation_id: op.operation_id,
    operation_status: op.status,
    current_step: op.current_step,
    last_error_code: op.last_error_code,
    last_error_cause: op.last_error_cause ?? null,
  };
  let failure: CliFailure;
  if (op.status === 'blocked') {
    failure = new CliFailure(
      'provisioning_blocked',
      `provisioning of tenant ${op.tenant_id} is blocked at step ${op.current_step} ` +
        `(last_error_code ${errorWithCause(op.last_error_code, op.last_error_cause)}). ` +
        'Fix the cause (see docs/provisioning.md for the error code), then run ' +
        `\`iam provisioning retry --tenant ${op.tenant_id}\`.`,
    );
  } else {
    const lastError = op.last_error_code
      ? `, last_error_code ${errorWithCause(op.last_error_code, op.last_error_cause)}`
      : '';
    failure = new CliFailure(
      'provisioning_timeout',
      `tenant ${op.tenant_id} is still provisioning after ${timeoutSeconds} s ` +
        `(status ${op.status}, step ${op.current_step}${lastError}). ` +
        'It goes on in the background while a daemon runs; ' +
        `check it with \`iam provisioning show --tenant ${op.tenant_id}\`.`,
    );
  }
  failure.context = context;
  throw failure;
}
