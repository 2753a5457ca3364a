/**
 * Tenant provisioning: creating a tenant records an operation whose steps a runner advances
 * one at a time (the state machine in state-machine.ts, the steps' work in effects.ts). The
 * tenant stays `provisioning` (no logins, no tokens) until the last step activates it.
 * See docs/provisioning.md for the states, steps, error codes and history.
 *
 * Several daemons (the `provisioning` job) and a CLI process (`iam tenants create` waiting for
 * its tenant) may run the runner against one database. Each operation is claimed one-winner
 * with a conditional UPDATE of its `lease_holder`/`lease_until`; every later write of the
 * runner is conditional on still holding that lease. No transaction is held across a step's
 * check (an SMTP dialogue, key generation): a step runs between two short transactions. A
 * failed step stores its error code and a sanitised cause (shared/services/failure.ts) on the
 * step, the operation and the history event. The runner itself (claiming, running and
 * recording steps) is in runner.ts; this service creates, reads, retries and waits.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { newId } from '../../crypto.js';
import type { JsonObject, Tenant } from '../../db/entities.js';
import { retryTransient, type Database, type Db, type Tx } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import {
  OperationLookups,
  TenantRepository,
  TenantScope,
  type ProvisioningOperationRow,
} from '../../repositories/index.js';
import { CreateTenantInput } from '../../schemas/admin.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import type { DirectoryService } from '../directory.js';
import type { IdempotencyHandle } from '../idempotency.js';
import type { KeyService } from '../keys.js';
import type { EmailProviders } from '../mail/index.js';
import { PAUSED_STATES, ProvisioningEffects } from './effects.js';
import { ProvisioningRunner, recordEvent, type ProvisioningLogger } from './runner.js';
import {
  FIRST_STEP,
  ISOLATION_POLICY,
  isSettled,
  OPERATION_KIND,
  PROVISIONING_STEPS,
  type ProvisioningOptions,
} from './state-machine.js';
import { operationView, type ProvisioningOperationView, type ProvisioningStepView } from './views.js';

/** Most history events a view carries (the oldest are left out beyond it; the table keeps all). */
const HISTORY_LIMIT = 200;
/** Most due operations one pass of the job picks up. */
const DUE_BATCH = 50;

export type { ProvisioningLogger } from './runner.js';

export interface ProvisioningDeps {
  directory: DirectoryService;
  keys: KeyService;
  mail: EmailProviders;
  options: ProvisioningOptions;
  logger?: ProvisioningLogger;
  /** Identifies this runner in `lease_holder`; unique per process by default. */
  holder?: string;
}

/** How a waiting caller hears of progress (the CLI prints these). */
export type ProgressListener = (op: ProvisioningOperationView, step: ProvisioningStepView) => void;

export interface WaitOptions {
  /** Give up waiting (the operation goes on in the background) after this long. */
  timeoutMs: number;
  /** Called once for every change of a step's status or attempt count. */
  onProgress?: ProgressListener;
  signal?: AbortSignal;
}

function newHolder(): string {
  return `${hostname().slice(0, 64)}:${process.pid}:${randomBytes(6).toString('base64url')}`;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export class ProvisioningService {
  readonly holder: string;
  private readonly listeners = new Set<() => void>();
  private readonly runner: ProvisioningRunner;

  constructor(
    private readonly ds: Database,
    private readonly deps: ProvisioningDeps,
  ) {
    this.holder = deps.holder ?? newHolder();
    const effects = new ProvisioningEffects(ds, deps.keys, deps.mail);
    this.runner = new ProvisioningRunner(ds, this.holder, effects, deps.options, deps.logger);
  }

  private scope(tenantId: string, db: Db = this.ds): TenantScope {
    return new TenantScope(db, tenantId);
  }

  // ---- creating and reading -------------------------------------------------------------

  /**
   * Creates a tenant in state `provisioning` and, in the same transaction, the provisioning
   * operation that will activate it and the audit event; then kicks the runner. Until the
   * operation completes the tenant's clients get no tokens and its users cannot sign in. With
   * `wait`, drives the operation here until it completes, blocks or the timeout passes, then
   * returns the tenant as it is by then. The CLI and test seeding wait; the admin API does not.
   */
  async createTenant(
    input: unknown,
    actor: Actor,
    opts: { wait?: WaitOptions } = {},
  ): Promise<{ tenant: Tenant; operation: ProvisioningOperationView }> {
    const { name, allow_signup } = parseInput(CreateTenantInput, input);
    const now = Date.now();
    const tenant: Tenant = {
      id: newId('ten'),
      name,
      lifecycle_state: 'provisioning',
      settings: { allowSignup: allow_signup },
      created_at: now,
      updated_at: now,
    };
    await this.ds.transaction(async (tx) => {
      await new TenantRepository(tx).insert(tenant);
      const operationId = await this.record(tx, tenant.id, { name, allow_signup }, actor, now);
      await audit(tx, actor, {
        tenantId: tenant.id,
        action: 'tenant.create',
        targetType: 'tenant',
        targetId: tenant.id,
        summary: { after: { name, allow_signup }, provisioning_operation_id: operationId },
      });
    });
    // Read before the kick: the answer shows the operation as created (queued).
    const operation = await this.latest(tenant.id);
    this.kick();
    if (!opts.wait) return { tenant, operation };
    const settled = await this.waitFor(tenant.id, opts.wait);
    return { tenant: await this.deps.directory.requireTenant(tenant.id), operation: settled };
  }

  /** Records a new operation, its steps and its `created` event, inside the caller's transaction. */
  private async record(tx: Tx, tenantId: string, input: JsonObject, actor: Actor, now: number): Promise<string> {
    const scope = this.scope(tenantId, tx);
    const id = newId('prv');
    await scope.provisioning.insertOperation({
      id,
      kind: OPERATION_KIND,
      isolationPolicy: ISOLATION_POLICY,
      firstStep: FIRST_STEP,
      input,
      now,
    });
    for (const [i, key] of PROVISIONING_STEPS.entries()) await scope.provisioning.insertStep(id, key, i, now);
    await recordEvent(scope, { operationId: id, event: 'created', actor, now });
    return id;
  }

  /** The tenant's latest provisioning operation; 404 when the tenant or the operation is unknown. */
  async latest(tenantId: string, db: Db = this.ds): Promise<ProvisioningOperationView> {
    const scope = this.scope(tenantId, db);
    const op = await scope.provisioning.latest();
    if (!op) {
      const tenant = await new TenantRepository(db).lifecycle(tenantId);
      throw tenant
        ? new ApiError(
            404,
            'not_found',
            `Tenant ${tenantId} has no provisioning operation (it was created before provisioning operations existed).`,
          )
        : notFound(`Tenant ${tenantId}`);
    }
    return this.view(scope, op);
  }

  private async view(scope: TenantScope, op: ProvisioningOperationRow): Promise<ProvisioningOperationView> {
    const steps = await scope.provisioning.steps(op.id);
    const events = await scope.provisioning.history(op.id, HISTORY_LIMIT);
    return operationView(op, steps, events);
  }

  // ---- retry ----------------------------------------------------------------------------

  /**
   * Requeues the tenant's blocked operation: status `queued`, current step `request_accepted`
   * (the runner skips completed steps, so it goes straight back to the one that failed, with
   * its failure count reset). Completed steps, attempt counts and the history are kept; the
   * retry is one more history event, one more `retry_count`, and an audit event, all in one
   * transaction (with the answer, under an Idempotency-Key). Not blocked: 409
   * `provisioning_not_blocked` with the current status.
   */
  async retry(tenantId: string, actor: Actor, idempotency?: IdempotencyHandle): Promise<ProvisioningOperationView> {
    let requeued: ProvisioningOperationView | undefined;
    await retryTransient(
      () =>
        this.ds.transaction(async (tx) => {
          requeued = undefined;
          const scope = this.scope(tenantId, tx);
          const op = await scope.provisioning.latest();
          if (!op) {
            await this.latest(tenantId, tx); // throws the right 404
            return;
          }
          const now = Date.now();
          // One winner: of concurrent retries only one finds the operation still blocked.
          if ((await scope.provisioning.requeueBlocked(op.id, FIRST_STEP, now)) !== 1) return;
          const blockedSteps = await scope.provisioning.blockedSteps(op.id);
          await scope.provisioning.resetBlockedSteps(op.id, now);
          await recordEvent(scope, {
            operationId: op.id,
            event: 'retried',
            step: blockedSteps[0],
            errorCode: op.last_error_code,
            errorCause: op.last_error_cause,
            actor,
            now,
          });
          await audit(tx, actor, {
            tenantId,
            action: 'tenant.provisioning.retry',
            targetType: 'tenant',
            targetId: tenantId,
            summary: {
              operation_id: op.id,
              blocked_step: blockedSteps[0] ?? null,
              last_error_code: op.last_error_code,
              retry_count: op.retry_count + 1,
              request_id: actor.requestId ?? null,
            },
          });
          // Read here, before any runner can claim it: the answer is the operation as requeued.
          requeued = await this.latest(tenantId, tx);
          await idempotency?.complete(tx, 200, requeued);
        }),
      10_000,
    );
    if (requeued) {
      this.kick();
      return requeued;
    }
    // Read after the transaction ended, so the status named is a committed one.
    const current = await this.latest(tenantId);
    throw new ApiError(
      409,
      'provisioning_not_blocked',
      `Only a blocked provisioning operation can be retried; this one is ${current.status}.`,
      { operation_id: current.operation_id, operation_status: current.status, current_step: current.current_step },
    );
  }

  // ---- kicks ----------------------------------------------------------------------------

  /** Wakes this process's runner (the daemon's job) so a new or requeued operation starts now. */
  kick(): void {
    for (const fn of this.listeners) fn();
  }

  onKick(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  // ---- the runner -----------------------------------------------------------------------

  /** One pass of the job: every due operation this runner can claim, advanced as far as it goes now. */
  async runDue(signal?: AbortSignal): Promise<number> {
    const due = await new OperationLookups(this.ds).dueProvisioning(Date.now(), DUE_BATCH);
    let advanced = 0;
    for (const { id, tenantId } of due) {
      if (signal?.aborted) break;
      if (await this.runner.run(this.scope(tenantId), id, signal)) advanced++;
    }
    return advanced;
  }

  /**
   * Claims one operation (if it is due and free) and runs its steps until it completes, fails
   * a step (then it is rescheduled or blocked) or `signal` aborts. Returns whether it was claimed.
   */
  async advance(operationId: string, signal?: AbortSignal, afterStep?: () => Promise<void>): Promise<boolean> {
    const tenantId = await new OperationLookups(this.ds).provisioningTenant(operationId);
    if (!tenantId) return false;
    return this.runner.run(this.scope(tenantId), operationId, signal, afterStep);
  }

  // ---- waiting --------------------------------------------------------------------------

  /**
   * Drives the tenant's latest operation from this process until it is `completed` or
   * `blocked`, or the timeout passes (then it returns the operation as it is; it goes on in
   * the background). Safe with daemons running: whoever claims a step runs it, and progress
   * is read from the database either way. Waits through backoff.
   */
  async waitFor(tenantId: string, opts: WaitOptions): Promise<ProvisioningOperationView> {
    const deadline = Date.now() + opts.timeoutMs;
    const seen = new Map<string, string>();
    const report = async () => {
      const op = await this.latest(tenantId);
      if (opts.onProgress) {
        for (const s of op.steps) {
          const mark = `${s.status}:${s.attempt_count}`;
          if (seen.get(s.step_key) !== mark && s.status !== 'pending' && s.status !== 'running') {
            seen.set(s.step_key, mark);
            opts.onProgress(op, s);
          }
        }
      }
      return op;
    };
    for (;;) {
      let op = await report();
      // Suspended meanwhile: nothing to run until a resume, so only look again now and then.
      const tenant = await new TenantRepository(this.ds).lifecycle(tenantId);
      const paused = tenant !== undefined && PAUSED_STATES.has(tenant.lifecycle_state);
      if (!paused && !isSettled(op.status) && !opts.signal?.aborted) {
        await this.runner.run(this.scope(tenantId), op.operation_id, opts.signal, async () => {
          await report();
        });
        op = await report();
      }
      if (isSettled(op.status) || opts.signal?.aborted) return op;
      const now = Date.now();
      if (now >= deadline) return op;
      // Due again at next_attempt_at (backoff), or held by another runner: look again soon.
      const due = paused ? now + 500 : (op.next_attempt_at ?? now);
      await sleep(Math.max(20, Math.min(due - now, 500, deadline - now)), opts.signal);
    }
  }
}
