/**
 * The provisioning runner: claims one operation with its lease and runs its steps, each
 * between two short transactions, recording attempts, completions and failures (with their
 * backoff or block) on the steps, the operation and the history. Separate from service.ts,
 * which creates, reads, retries and waits for operations and hands the work to this runner;
 * the history-event writer both use lives here too. See docs/provisioning.md.
 */
import { randomBytes } from 'node:crypto';
import { retryTransient, type Database, type Tx } from '../../db/index.js';
import {
  TenantRepository,
  type ProvisioningOperationRow,
  type ProvisioningStepRow,
  type TenantScope,
} from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import { sanitizedCause } from '../failure.js';
import {
  PAUSED_STATES,
  ProvisioningPaused,
  RUNNER_ACTOR,
  StepFailure,
  type ProvisioningEffects,
  type StepOutcome,
} from './effects.js';
import {
  afterFailure,
  LAST_STEP,
  nextStep,
  PROVISIONING_LEASE_MS,
  stepToRun,
  type OperationStatus,
  type ProvisioningOptions,
  type StepKey,
} from './state-machine.js';

/** The lease was taken over (it expired while this runner was stalled): stop touching the operation. */
class LeaseLost extends Error {}

/** Narrow logger (pino fits): the runner logs outcomes, never settings or secrets. */
export interface ProvisioningLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

let eventSeq = 0;
/** Sortable within a millisecond (history is read in id order after created_at), unique across processes. */
function eventId(now: number): string {
  eventSeq = (eventSeq + 1) % 1_679_616;
  const time = now.toString(36).padStart(9, '0');
  const seq = eventSeq.toString(36).padStart(4, '0');
  return `pev_${time}${seq}${randomBytes(8).toString('base64url')}`;
}

/** One history event, appended in the transaction of the change it records. */
export async function recordEvent(
  scope: TenantScope,
  e: {
    operationId: string;
    event: string;
    step?: string;
    attempt?: number;
    errorCode?: string | null;
    errorCause?: string | null;
    actor: Actor;
    now: number;
  },
): Promise<void> {
  await scope.provisioning.appendEvent({
    id: eventId(e.now),
    operationId: e.operationId,
    event: e.event,
    step: e.step ?? null,
    attempt: e.attempt ?? null,
    errorCode: e.errorCode ?? null,
    errorCause: e.errorCause ?? null,
    actorType: e.actor.type,
    actorId: e.actor.id.slice(0, 128),
    now: e.now,
  });
}

/** Runs claimed operations' steps for one runner identity (`holder`). */
export class ProvisioningRunner {
  constructor(
    private readonly ds: Database,
    readonly holder: string,
    private readonly effects: ProvisioningEffects,
    private readonly options: ProvisioningOptions,
    private readonly logger?: ProvisioningLogger,
  ) {}

  /**
   * Claims the operation (if it is due and free) and runs its steps until it completes, fails
   * a step (then it is rescheduled or blocked) or `signal` aborts. Returns whether it was claimed.
   */
  async run(
    scope: TenantScope,
    operationId: string,
    signal?: AbortSignal,
    afterStep?: () => Promise<void>,
  ): Promise<boolean> {
    const now = Date.now();
    const won = await retryTransient(
      () => scope.provisioning.claim(operationId, this.holder, now + PROVISIONING_LEASE_MS, now),
      5_000,
    );
    if (won !== 1) return false;
    try {
      await this.work(scope, operationId, signal, afterStep);
    } catch (e) {
      if (e instanceof LeaseLost) {
        this.logger?.warn({ operationId }, 'provisioning lease lost to another runner; leaving the operation to it');
        return true;
      }
      if (e instanceof ProvisioningPaused) {
        // The tenant was suspended: hand the operation back untouched. The job's queue skips it
        // (OperationLookups.dueProvisioning) until a resume makes the tenant `provisioning` again.
        this.logger?.info(
          { operationId, lifecycleState: e.lifecycleState },
          'provisioning paused: the tenant is not provisioning',
        );
        await this.release(scope, operationId, 'queued', Date.now()).catch(() => undefined);
        return true;
      }
      // A database hiccup, not a step failure: hand the operation back, due again shortly.
      this.logger?.error({ operationId, err: e }, 'provisioning runner failed; the operation is handed back');
      await this.release(scope, operationId, 'queued', Date.now() + 1_000).catch(() => undefined);
    }
    return true;
  }

  private async release(
    scope: TenantScope,
    operationId: string,
    status: OperationStatus,
    nextAttemptAt: number | null,
  ): Promise<void> {
    await retryTransient(
      () => scope.provisioning.release(operationId, this.holder, status, nextAttemptAt, Date.now()),
      5_000,
    );
  }

  private async work(
    scope: TenantScope,
    operationId: string,
    signal?: AbortSignal,
    afterStep?: () => Promise<void>,
  ): Promise<void> {
    for (;;) {
      if (signal?.aborted) {
        // Stopping: hand it back, due now, for the next runner.
        await this.release(scope, operationId, 'queued', Date.now());
        return;
      }
      const op = await scope.provisioning.get(operationId);
      if (!op || op.lease_holder !== this.holder) throw new LeaseLost();
      const steps = await scope.provisioning.steps(operationId);
      const step = stepToRun(steps);
      if (!step) {
        // Every step done (a crash after the last commit cannot leave this, but be safe).
        await this.release(scope, operationId, 'completed', op.next_attempt_at);
        return;
      }
      const key = step.step_key as StepKey;
      const attempt = step.attempt_count + 1;
      const started = Date.now();
      await this.write(scope, async (s, tx) => {
        // Paused while the tenant is suspended: checked with the attempt, so none is counted.
        const tenant = await new TenantRepository(tx).lifecycle(op.tenant_id);
        if (tenant && PAUSED_STATES.has(tenant.lifecycle_state)) throw new ProvisioningPaused(tenant.lifecycle_state);
        const leased = await s.provisioning.beginAttempt(
          operationId,
          this.holder,
          key,
          started + PROVISIONING_LEASE_MS,
          started,
        );
        if (leased !== 1) throw new LeaseLost();
        await s.provisioning.markStepRunning(operationId, key, started);
        await recordEvent(s, { operationId, event: 'attempt', step: key, attempt, actor: RUNNER_ACTOR, now: started });
      });

      let outcome: StepOutcome | undefined;
      let failure: StepFailure | undefined;
      try {
        outcome = await this.effects.check(key, op);
      } catch (e) {
        failure =
          e instanceof StepFailure
            ? e
            : new StepFailure(`${key}_failed`, (e as Error)?.message ?? String(e), { cause: e });
      }
      if (outcome) {
        try {
          await this.complete(scope, op, key, attempt, outcome);
          const done = key === LAST_STEP;
          this.logger?.info(
            { operationId, tenantId: op.tenant_id, step: key, attempt },
            done ? 'tenant provisioned' : 'provisioning step completed',
          );
          await afterStep?.();
          if (done) return;
          continue;
        } catch (e) {
          if (!(e instanceof StepFailure)) throw e;
          failure = e;
        }
      }
      await this.fail(scope, op, key, step, attempt, failure!);
      await afterStep?.();
      return;
    }
  }

  /** A runner transaction, retried on contention, with the scope inside it. */
  private write(scope: TenantScope, fn: (s: TenantScope, tx: Tx) => Promise<void>): Promise<void> {
    return retryTransient(() => this.ds.transaction((tx) => fn(scope.in(tx), tx)), 10_000);
  }

  private async complete(
    scope: TenantScope,
    op: ProvisioningOperationRow,
    key: StepKey,
    attempt: number,
    outcome: StepOutcome,
  ): Promise<void> {
    const now = Date.now();
    const next = nextStep(key);
    await this.write(scope, async (s, tx) => {
      const prepared = { ...(op.preparation_result ?? {}), ...(outcome.prepared ?? {}) };
      let leased: number;
      if (!next) {
        await this.effects.activate(tx, op.tenant_id, op.id, now);
        leased = await s.provisioning.complete(op.id, this.holder, key, prepared, now);
      } else {
        leased = await s.provisioning.moveTo(op.id, this.holder, next, prepared, now + PROVISIONING_LEASE_MS, now);
      }
      if (leased !== 1) throw new LeaseLost();
      await s.provisioning.completeStep(
        op.id,
        key,
        {
          observed: outcome.observed ?? null,
          progressCurrent: outcome.progress?.current ?? null,
          progressTotal: outcome.progress?.total ?? null,
        },
        now,
      );
      await recordEvent(s, { operationId: op.id, event: 'completed', step: key, attempt, actor: RUNNER_ACTOR, now });
    });
  }

  private async fail(
    scope: TenantScope,
    op: ProvisioningOperationRow,
    key: StepKey,
    step: ProvisioningStepRow,
    attempt: number,
    failure: StepFailure,
  ): Promise<void> {
    const now = Date.now();
    const t = afterFailure(step.failures + 1, now, this.options);
    // The kind of failure and the peer's words, never settings, keys or addresses.
    const cause = sanitizedCause(failure.cause ?? failure);
    await this.write(scope, async (s, tx) => {
      const released = await s.provisioning.fail(op.id, this.holder, {
        status: t.status,
        code: failure.code,
        cause,
        nextAttemptAt: t.nextAttemptAt,
        now,
      });
      if (released !== 1) throw new LeaseLost();
      await s.provisioning.failStep(op.id, key, {
        status: t.status,
        failures: t.failures,
        code: failure.code,
        cause,
        nextAttemptAt: t.nextAttemptAt,
        now,
      });
      const event = { operationId: op.id, step: key, attempt, errorCode: failure.code, errorCause: cause };
      await recordEvent(s, { ...event, event: 'failed', actor: RUNNER_ACTOR, now });
      if (t.blocked) {
        await recordEvent(s, { ...event, event: 'blocked', actor: RUNNER_ACTOR, now });
        await audit(tx, RUNNER_ACTOR, {
          tenantId: op.tenant_id,
          action: 'tenant.provisioning.blocked',
          targetType: 'tenant',
          targetId: op.tenant_id,
          outcome: 'failure',
          summary: {
            operation_id: op.id,
            step: key,
            last_error_code: failure.code,
            last_error_cause: cause,
            failures: t.failures,
          },
        });
      }
    });
    const line = {
      operationId: op.id,
      tenantId: op.tenant_id,
      step: key,
      attempt,
      failures: t.failures,
      errorCode: failure.code,
      error: cause,
    };
    if (t.blocked) this.logger?.error(line, 'tenant provisioning blocked; fix the cause, then retry it');
    else this.logger?.warn({ ...line, retryInMs: t.nextAttemptAt! - now }, 'provisioning step failed; will retry');
  }
}
