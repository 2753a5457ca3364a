/**
 * Tenant provisioning: creating a tenant records an operation whose steps a runner advances
 * one at a time, retrying a failed step with exponential backoff and blocking the operation
 * after IAM_PROVISIONING_MAX_ATTEMPTS failures of one step, until an operator retries it.
 * The tenant stays `provisioning` (no logins, no tokens) until the last step activates it.
 * See docs/provisioning.md for the states, steps, error codes and history.
 *
 * Several daemons (the `provisioning` job) and a CLI process (`iam tenants create` waiting for
 * its tenant) may run the runner against one database. Each operation is claimed one-winner
 * with a conditional UPDATE of its `lease_holder`/`lease_until`; every later write of the
 * runner is conditional on still holding that lease. No transaction is held across a step's
 * check (an SMTP dialogue, key generation): a step runs between two short transactions.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataSource, EntityManager } from 'typeorm';
import { migrations } from '../../migrations/index.js';
import type { JsonObject, Tenant } from '../db/entities.js';
import { retryTransient } from '../db/retry.js';
import { all, exec, json, num, one, type Db } from '../db/sql.js';
import { ApiError, notFound } from '../errors.js';
import { newId } from '../crypto.js';
import { audit, type Actor } from './audit.js';
import type { DirectoryService } from './directory.js';
import type { KeyService } from './keys.js';
import type { EmailProviders } from './mail/index.js';

/** The steps, in the order they run. */
export const PROVISIONING_STEPS = [
  'request_accepted',
  'schema_verified',
  'signing_key_ready',
  'mail_transport_verified',
  'tenant_activated',
] as const;
export type StepKey = (typeof PROVISIONING_STEPS)[number];

/** Operation statuses: `queued` → `running` → `completed`, or → `retry_scheduled` → `running` …, or → `blocked` → (retry) `queued`. */
export type OperationStatus = 'queued' | 'running' | 'retry_scheduled' | 'blocked' | 'completed';

/** This service keeps every tenant in one database, rows scoped by tenant id (the repository layer). */
export const ISOLATION_POLICY = 'shared_database';
export const OPERATION_KIND = 'tenant_create';
/** Backoff never grows beyond this, however many attempts are allowed. */
export const PROVISIONING_RETRY_MAX_MS = 300_000;
/** How long a claim lasts; every step's write renews it. Longer than any step's own timeout. */
export const PROVISIONING_LEASE_MS = 60_000;
/** An SMTP relay that has not answered within this is unreachable for provisioning's purpose. */
export const MAIL_VERIFY_TIMEOUT_MS = 5_000;
/** Most history events a view carries (the oldest are left out beyond it; the table keeps all). */
const HISTORY_LIMIT = 200;

export interface ProvisioningOptions {
  /** Failures of one step before the operation is blocked (IAM_PROVISIONING_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Backoff before the first retry, doubling per failure (IAM_PROVISIONING_RETRY_BASE_MS). */
  retryBaseMs: number;
}

/** Backoff after the `failures`-th consecutive failure of a step: base · 2^(failures−1), capped. */
export function provisioningBackoffMs(failures: number, baseMs: number): number {
  return Math.min(PROVISIONING_RETRY_MAX_MS, baseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}

/** The spec's "Step" record. */
export interface ProvisioningStepView {
  step_key: string;
  status: string;
  attempt_count: number;
  next_attempt_at: number | null;
  last_error_code: string | null;
  observed_resource_id: string | null;
  progress_current: number | null;
  progress_total: number | null;
  started_at: number | null;
  completed_at: number | null;
  updated_at: number;
}

export interface ProvisioningEventView {
  event: string;
  step_key: string | null;
  attempt: number | null;
  error_code: string | null;
  actor_type: string;
  actor_id: string;
  created_at: number;
}

/** The spec's "Provisioning operation" record, plus `retry_count` and `history` (it is extensible). */
export interface ProvisioningOperationView {
  operation_id: string;
  tenant_id: string;
  operation_kind: string;
  source_tenant_id: string | null;
  isolation_policy: string;
  status: string;
  current_step: string;
  attempt_count: number;
  next_attempt_at: number | null;
  last_error_code: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  preparation_result: JsonObject | null;
  capacity_operation_ids: Record<string, string>;
  steps: ProvisioningStepView[];
  retry_count: number;
  history: ProvisioningEventView[];
}

interface OpRow {
  id: string;
  tenant_id: string;
  operation_kind: string;
  source_tenant_id: string | null;
  isolation_policy: string;
  status: string;
  current_step: string;
  attempt_count: unknown;
  retry_count: unknown;
  next_attempt_at: unknown;
  last_error_code: string | null;
  input_json: unknown;
  preparation_result: unknown;
  lease_holder: string | null;
  lease_until: unknown;
  created_at: unknown;
  updated_at: unknown;
  completed_at: unknown;
}
interface StepRow {
  step_key: string;
  step_order: unknown;
  status: string;
  attempt_count: unknown;
  failures: unknown;
  next_attempt_at: unknown;
  last_error_code: string | null;
  observed_resource_id: string | null;
  progress_current: unknown;
  progress_total: unknown;
  started_at: unknown;
  completed_at: unknown;
  updated_at: unknown;
}
interface EventRow {
  event_type: string;
  step_key: string | null;
  attempt: unknown;
  error_code: string | null;
  actor_type: string;
  actor_id: string;
  created_at: unknown;
}

const nullableNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A step's check failed; `code` is its stable error code (docs/provisioning.md). */
export class StepFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'StepFailure';
  }
}

/** The lease was taken over (it expired while this runner was stalled): stop touching the operation. */
class LeaseLost extends Error {}

/** Who advances operations, in the audit log and the history. */
const RUNNER_ACTOR: Actor = { type: 'system', id: 'provisioning' };

/** What a step's check found, recorded on its row when it completes. */
interface StepOutcome {
  observed?: string | null;
  progress?: { current: number; total: number };
  /** Merged into the operation's `preparation_result`. */
  prepared?: JsonObject;
}

/** Narrow logger (pino fits): the runner logs outcomes, never settings or secrets. */
export interface ProvisioningLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

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

/** Records a new provisioning operation and its steps, inside the caller's transaction. */
export async function recordProvisioningOperation(
  em: EntityManager,
  tenantId: string,
  input: JsonObject,
  actor: Actor,
  now = Date.now(),
): Promise<string> {
  const id = newId('prv');
  await em.query(
    `INSERT INTO provisioning_operations (id, tenant_id, operation_kind, source_tenant_id, isolation_policy, status, current_step, attempt_count, retry_count,
       next_attempt_at, last_error_code, input_json, preparation_result, lease_holder, lease_until, created_at, updated_at, completed_at)
     VALUES (?, ?, ?, NULL, ?, 'queued', ?, 0, 0, ?, NULL, ?, NULL, NULL, NULL, ?, ?, NULL)`,
    [id, tenantId, OPERATION_KIND, ISOLATION_POLICY, PROVISIONING_STEPS[0], now, JSON.stringify(input), now, now],
  );
  for (const [i, key] of PROVISIONING_STEPS.entries()) {
    await em.query(
      `INSERT INTO provisioning_steps (operation_id, step_key, step_order, status, attempt_count, failures, next_attempt_at, last_error_code,
         observed_resource_id, progress_current, progress_total, started_at, completed_at, updated_at)
       VALUES (?, ?, ?, 'pending', 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?)`,
      [id, key, i, now],
    );
  }
  await recordEvent(em, { operationId: id, tenantId, event: 'created', actor, now });
  return id;
}

let eventSeq = 0;
/** Sortable within a millisecond (history is read in id order after created_at), unique across processes. */
function eventId(now: number): string {
  eventSeq = (eventSeq + 1) % 1_679_616;
  return `pev_${now.toString(36).padStart(9, '0')}${eventSeq.toString(36).padStart(4, '0')}${randomBytes(8).toString('base64url')}`;
}

async function recordEvent(
  db: Db,
  e: {
    operationId: string;
    tenantId: string;
    event: string;
    step?: string;
    attempt?: number;
    errorCode?: string | null;
    actor: Actor;
    now: number;
  },
): Promise<void> {
  await exec(
    db,
    `INSERT INTO provisioning_events (id, operation_id, tenant_id, step_key, event_type, attempt, error_code, actor_type, actor_id, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      eventId(e.now),
      e.operationId,
      e.tenantId,
      e.step ?? null,
      e.event,
      e.attempt ?? null,
      e.errorCode ?? null,
      e.actor.type,
      e.actor.id.slice(0, 128),
      e.now,
    ],
  );
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

  constructor(
    private readonly ds: DataSource,
    private readonly deps: ProvisioningDeps,
  ) {
    this.holder = deps.holder ?? newHolder();
  }

  // ---- creating and reading -------------------------------------------------------------

  /**
   * Creates a tenant (state `provisioning`) with its provisioning operation and kicks the
   * runner. With `wait`, drives the operation here until it completes, blocks or the timeout
   * passes, then returns the tenant as it is by then. The CLI and test seeding use this; the
   * admin API does not wait.
   */
  async createTenant(
    input: unknown,
    actor: Actor,
    opts: { wait?: WaitOptions } = {},
  ): Promise<{ tenant: Tenant; operation: ProvisioningOperationView }> {
    const created = await this.deps.directory.createTenant(input, actor);
    // Read before the kick: the answer shows the operation as created (queued).
    const operation = await this.latest(created.id);
    this.kick();
    if (!opts.wait) return { tenant: created, operation };
    const settled = await this.waitFor(created.id, opts.wait);
    return { tenant: await this.deps.directory.requireTenant(created.id), operation: settled };
  }

  /** The tenant's latest provisioning operation; 404 when the tenant or the operation is unknown. */
  async latest(tenantId: string, db: Db = this.ds): Promise<ProvisioningOperationView> {
    const op = await one<OpRow>(
      db,
      'SELECT * FROM provisioning_operations WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT 1',
      [tenantId],
    );
    if (!op) {
      const tenant = await one<{ id: string }>(db, 'SELECT id FROM tenants WHERE id = ?', [tenantId]);
      throw tenant
        ? new ApiError(
            404,
            'not_found',
            `Tenant ${tenantId} has no provisioning operation (it was created before provisioning operations existed).`,
          )
        : notFound(`Tenant ${tenantId}`);
    }
    return this.view(db, op);
  }

  private async view(db: Db, op: OpRow): Promise<ProvisioningOperationView> {
    const steps = await all<StepRow>(
      db,
      'SELECT * FROM provisioning_steps WHERE operation_id = ? ORDER BY step_order',
      [op.id],
    );
    const events = await all<EventRow>(
      db,
      'SELECT event_type, step_key, attempt, error_code, actor_type, actor_id, created_at FROM provisioning_events WHERE operation_id = ? ORDER BY created_at DESC, id DESC LIMIT ?',
      [op.id, HISTORY_LIMIT],
    );
    return {
      operation_id: op.id,
      tenant_id: op.tenant_id,
      operation_kind: op.operation_kind,
      source_tenant_id: op.source_tenant_id,
      isolation_policy: op.isolation_policy,
      status: op.status,
      current_step: op.current_step,
      attempt_count: num(op.attempt_count),
      next_attempt_at: nullableNum(op.next_attempt_at),
      last_error_code: op.last_error_code,
      created_at: num(op.created_at),
      updated_at: num(op.updated_at),
      completed_at: nullableNum(op.completed_at),
      preparation_result:
        op.preparation_result === null || op.preparation_result === undefined
          ? null
          : json<JsonObject>(op.preparation_result),
      // One database holds every tenant: there is no per-data-role capacity to set up.
      capacity_operation_ids: {},
      steps: steps.map((s) => ({
        step_key: s.step_key,
        status: s.status,
        attempt_count: num(s.attempt_count),
        next_attempt_at: nullableNum(s.next_attempt_at),
        last_error_code: s.last_error_code,
        observed_resource_id: s.observed_resource_id,
        progress_current: nullableNum(s.progress_current),
        progress_total: nullableNum(s.progress_total),
        started_at: nullableNum(s.started_at),
        completed_at: nullableNum(s.completed_at),
        updated_at: num(s.updated_at),
      })),
      retry_count: num(op.retry_count),
      history: events.reverse().map((e) => ({
        event: e.event_type,
        step_key: e.step_key,
        attempt: nullableNum(e.attempt),
        error_code: e.error_code,
        actor_type: e.actor_type,
        actor_id: e.actor_id,
        created_at: num(e.created_at),
      })),
    };
  }

  // ---- retry ----------------------------------------------------------------------------

  /**
   * Requeues the tenant's blocked operation: status `queued`, current step `request_accepted`
   * (the runner skips completed steps, so it goes straight back to the one that failed, with
   * its failure count reset). Completed steps, attempt counts and the history are kept; the
   * retry is one more history event, one more `retry_count`, and an audit event, all in one
   * transaction. Not blocked: 409 `provisioning_not_blocked` with the current status.
   */
  async retry(tenantId: string, actor: Actor): Promise<ProvisioningOperationView> {
    let requeued: ProvisioningOperationView | undefined;
    await retryTransient(
      () =>
        this.ds.transaction(async (em) => {
          requeued = undefined;
          const op = await one<OpRow>(
            em,
            'SELECT * FROM provisioning_operations WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT 1',
            [tenantId],
          );
          if (!op) await this.latest(tenantId, em); // throws the right 404
          const now = Date.now();
          // One winner: of concurrent retries only one finds the operation still blocked.
          const changed = await exec(
            em,
            `UPDATE provisioning_operations SET status = 'queued', current_step = ?, next_attempt_at = ?, retry_count = retry_count + 1,
          lease_holder = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND status = 'blocked'`,
            [PROVISIONING_STEPS[0], now, now, op!.id],
          );
          if (changed !== 1) return;
          const blockedSteps = await all<{ step_key: string }>(
            em,
            "SELECT step_key FROM provisioning_steps WHERE operation_id = ? AND status = 'blocked'",
            [op!.id],
          );
          await exec(
            em,
            "UPDATE provisioning_steps SET status = 'pending', failures = 0, next_attempt_at = NULL, updated_at = ? WHERE operation_id = ? AND status = 'blocked'",
            [now, op!.id],
          );
          await recordEvent(em, {
            operationId: op!.id,
            tenantId,
            event: 'retried',
            step: blockedSteps[0]?.step_key,
            errorCode: op!.last_error_code,
            actor,
            now,
          });
          await audit(em, actor, {
            tenantId,
            action: 'tenant.provisioning.retry',
            targetType: 'tenant',
            targetId: tenantId,
            summary: {
              operation_id: op!.id,
              blocked_step: blockedSteps[0]?.step_key ?? null,
              last_error_code: op!.last_error_code,
              retry_count: num(op!.retry_count) + 1,
              request_id: actor.requestId ?? null,
            },
          });
          // Read here, before any runner can claim it: the answer is the operation as requeued.
          requeued = await this.latest(tenantId, em);
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
    const now = Date.now();
    const due = await all<{ id: string }>(
      this.ds,
      `SELECT id FROM provisioning_operations WHERE status IN ('queued', 'retry_scheduled', 'running') AND next_attempt_at <= ?
       AND (lease_until IS NULL OR lease_until < ?) ORDER BY next_attempt_at LIMIT 50`,
      [now, now],
    );
    let advanced = 0;
    for (const { id } of due) {
      if (signal?.aborted) break;
      if (await this.advance(id, signal)) advanced++;
    }
    return advanced;
  }

  /**
   * Claims one operation (if it is due and free) and runs its steps until it completes, fails
   * a step (then it is rescheduled or blocked) or `signal` aborts. Returns whether it was claimed.
   */
  async advance(operationId: string, signal?: AbortSignal, afterStep?: () => Promise<void>): Promise<boolean> {
    const now = Date.now();
    const won = await retryTransient(
      () =>
        exec(
          this.ds,
          `UPDATE provisioning_operations SET status = 'running', lease_holder = ?, lease_until = ?, updated_at = ?
       WHERE id = ? AND status IN ('queued', 'retry_scheduled', 'running') AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)`,
          [this.holder, now + PROVISIONING_LEASE_MS, now, operationId, now, now],
        ),
      5_000,
    );
    if (won !== 1) return false;
    try {
      await this.work(operationId, signal, afterStep);
    } catch (e) {
      if (e instanceof LeaseLost) {
        this.deps.logger?.warn(
          { operationId },
          'provisioning lease lost to another runner; leaving the operation to it',
        );
        return true;
      }
      // A database hiccup, not a step failure: hand the operation back, due again shortly.
      this.deps.logger?.error({ operationId, err: e }, 'provisioning runner failed; the operation is handed back');
      await this.release(operationId, 'queued', Date.now() + 1_000).catch(() => undefined);
    }
    return true;
  }

  private async release(operationId: string, status: OperationStatus, nextAttemptAt: number): Promise<void> {
    await retryTransient(
      () =>
        exec(
          this.ds,
          'UPDATE provisioning_operations SET status = ?, next_attempt_at = ?, lease_holder = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND lease_holder = ?',
          [status, nextAttemptAt, Date.now(), operationId, this.holder],
        ),
      5_000,
    );
  }

  private async work(operationId: string, signal?: AbortSignal, afterStep?: () => Promise<void>): Promise<void> {
    for (;;) {
      if (signal?.aborted) {
        // Stopping: hand it back, due now, for the next runner.
        await this.release(operationId, 'queued', Date.now());
        return;
      }
      const op = await one<OpRow>(this.ds, 'SELECT * FROM provisioning_operations WHERE id = ?', [operationId]);
      if (!op || op.lease_holder !== this.holder) throw new LeaseLost();
      const steps = await all<StepRow>(
        this.ds,
        'SELECT * FROM provisioning_steps WHERE operation_id = ? ORDER BY step_order',
        [operationId],
      );
      const step = steps.find((s) => s.status !== 'completed');
      if (!step) {
        // Every step done (a crash after the last commit cannot leave this, but be safe).
        await this.release(operationId, 'completed', num(op.next_attempt_at));
        return;
      }
      const key = step.step_key as StepKey;
      const attempt = num(step.attempt_count) + 1;
      const started = Date.now();
      await this.write(async (em) => {
        await this.touch(em, operationId, started, `current_step = ?, attempt_count = attempt_count + 1`, [key]);
        await exec(
          em,
          `UPDATE provisioning_steps SET status = 'running', attempt_count = attempt_count + 1, next_attempt_at = NULL,
            started_at = COALESCE(started_at, ?), updated_at = ? WHERE operation_id = ? AND step_key = ?`,
          [started, started, operationId, key],
        );
        await recordEvent(em, {
          operationId,
          tenantId: op.tenant_id,
          event: 'attempt',
          step: key,
          attempt,
          actor: RUNNER_ACTOR,
          now: started,
        });
      });

      let outcome: StepOutcome | undefined;
      let failure: StepFailure | undefined;
      try {
        outcome = await this.check(key, op);
      } catch (e) {
        failure = e instanceof StepFailure ? e : new StepFailure(`${key}_failed`, (e as Error)?.message ?? String(e));
      }
      if (outcome) {
        try {
          await this.complete(op, key, outcome, steps);
          const done = key === PROVISIONING_STEPS[PROVISIONING_STEPS.length - 1];
          this.deps.logger?.info(
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
      await this.fail(op, key, step, attempt, failure!);
      await afterStep?.();
      return;
    }
  }

  /**
   * Runs inside a runner transaction: sets `extra` and renews the lease (or, with `release`,
   * gives it up), only while this runner still holds it; otherwise throws LeaseLost.
   */
  private async touch(
    em: EntityManager,
    operationId: string,
    now: number,
    extra: string,
    params: unknown[],
    release = false,
  ): Promise<void> {
    const lease = release ? 'lease_holder = NULL, lease_until = NULL' : 'lease_until = ?';
    const n = await exec(
      em,
      `UPDATE provisioning_operations SET ${extra}, ${lease}, updated_at = ? WHERE id = ? AND lease_holder = ?`,
      [...params, ...(release ? [] : [now + PROVISIONING_LEASE_MS]), now, operationId, this.holder],
    );
    if (n !== 1) throw new LeaseLost();
  }

  private write(fn: (em: EntityManager) => Promise<void>): Promise<void> {
    return retryTransient(() => this.ds.transaction(fn), 10_000);
  }

  private async complete(op: OpRow, key: StepKey, outcome: StepOutcome, steps: StepRow[]): Promise<void> {
    const now = Date.now();
    const index = PROVISIONING_STEPS.indexOf(key);
    const last = index === PROVISIONING_STEPS.length - 1;
    await this.write(async (em) => {
      const prepared = {
        ...(op.preparation_result ? json<JsonObject>(op.preparation_result) : {}),
        ...(outcome.prepared ?? {}),
      };
      if (last) {
        await this.activate(em, op.tenant_id, op.id, now);
        await this.touch(
          em,
          op.id,
          now,
          `status = 'completed', current_step = ?, completed_at = ?, next_attempt_at = NULL, preparation_result = ?`,
          [key, now, JSON.stringify(prepared)],
          true,
        );
      } else {
        await this.touch(em, op.id, now, 'current_step = ?, preparation_result = ?', [
          PROVISIONING_STEPS[index + 1],
          JSON.stringify(prepared),
        ]);
      }
      await exec(
        em,
        `UPDATE provisioning_steps SET status = 'completed', failures = 0, completed_at = ?, observed_resource_id = ?,
          progress_current = ?, progress_total = ?, updated_at = ? WHERE operation_id = ? AND step_key = ?`,
        [
          now,
          outcome.observed ?? null,
          outcome.progress?.current ?? null,
          outcome.progress?.total ?? null,
          now,
          op.id,
          key,
        ],
      );
      await recordEvent(em, {
        operationId: op.id,
        tenantId: op.tenant_id,
        event: 'completed',
        step: key,
        attempt: num(steps.find((s) => s.step_key === key)!.attempt_count) + 1,
        actor: RUNNER_ACTOR,
        now,
      });
    });
  }

  private async fail(op: OpRow, key: StepKey, step: StepRow, attempt: number, failure: StepFailure): Promise<void> {
    const now = Date.now();
    const failures = num(step.failures) + 1;
    const blocked = failures >= this.deps.options.maxAttempts;
    const next = blocked ? null : now + provisioningBackoffMs(failures, this.deps.options.retryBaseMs);
    const status: OperationStatus = blocked ? 'blocked' : 'retry_scheduled';
    await this.write(async (em) => {
      await this.touch(
        em,
        op.id,
        now,
        'status = ?, last_error_code = ?, next_attempt_at = ?',
        [status, failure.code, next],
        true,
      );
      await exec(
        em,
        `UPDATE provisioning_steps SET status = ?, failures = ?, last_error_code = ?, next_attempt_at = ?, updated_at = ? WHERE operation_id = ? AND step_key = ?`,
        [status, failures, failure.code, next, now, op.id, key],
      );
      await recordEvent(em, {
        operationId: op.id,
        tenantId: op.tenant_id,
        event: 'failed',
        step: key,
        attempt,
        errorCode: failure.code,
        actor: RUNNER_ACTOR,
        now,
      });
      if (blocked) {
        await recordEvent(em, {
          operationId: op.id,
          tenantId: op.tenant_id,
          event: 'blocked',
          step: key,
          attempt,
          errorCode: failure.code,
          actor: RUNNER_ACTOR,
          now,
        });
        await audit(em, RUNNER_ACTOR, {
          tenantId: op.tenant_id,
          action: 'tenant.provisioning.blocked',
          targetType: 'tenant',
          targetId: op.tenant_id,
          outcome: 'failure',
          summary: { operation_id: op.id, step: key, last_error_code: failure.code, failures },
        });
      }
    });
    // The message comes from the check (a connection error, a missing migration), never from settings or keys.
    const line = {
      operationId: op.id,
      tenantId: op.tenant_id,
      step: key,
      attempt,
      failures,
      errorCode: failure.code,
      error: failure.message.slice(0, 300),
    };
    if (blocked) this.deps.logger?.error(line, 'tenant provisioning blocked; fix the cause, then retry it');
    else this.deps.logger?.warn({ ...line, retryInMs: next! - now }, 'provisioning step failed; will retry');
  }

  // ---- the steps ------------------------------------------------------------------------

  private async check(key: StepKey, op: OpRow): Promise<StepOutcome> {
    switch (key) {
      case 'request_accepted': {
        // The input was recorded with the tenant in one transaction; check that both are there.
        const t = await one<{ id: string; lifecycle_state: string }>(
          this.ds,
          'SELECT id, lifecycle_state FROM tenants WHERE id = ?',
          [op.tenant_id],
        );
        if (!t) throw new StepFailure('tenant_missing', `tenant ${op.tenant_id} does not exist`);
        json<JsonObject>(op.input_json);
        return { observed: t.id };
      }
      case 'schema_verified': {
        // The same test as `iam` runs before every command, with a count for progress.
        const known = migrations.map((m) => new m().name ?? m.name);
        let applied: Set<string>;
        try {
          applied = new Set((await all<{ name: string }>(this.ds, 'SELECT name FROM migrations')).map((r) => r.name));
        } catch (e) {
          throw new StepFailure('schema_not_current', `cannot read the applied migrations: ${(e as Error).message}`);
        }
        const done = known.filter((n) => applied.has(n)).length;
        if (done < known.length) {
          throw new StepFailure(
            'schema_not_current',
            `${known.length - done} of ${known.length} migrations are not applied: run \`iam db migrate\``,
          );
        }
        return {
          observed: known[known.length - 1],
          progress: { current: done, total: known.length },
          prepared: { schema_migrations: known.length },
        };
      }
      case 'signing_key_ready': {
        // Tokens for the tenant's users are signed with the service's active key: make sure there
        // is one, and that it opens with this IAM_SECRET_KEY.
        try {
          await this.deps.keys.ensureActive();
          const { kid, alg } = await this.deps.keys.signingKey();
          return { observed: kid, prepared: { signing_key_kid: kid, signing_key_alg: alg } };
        } catch (e) {
          throw new StepFailure('signing_key_unavailable', (e as Error).message);
        }
      }
      case 'mail_transport_verified': {
        // Users sign in with a code sent by email: the tenant's first mail provider must answer.
        const t = await one<{ settings: unknown }>(this.ds, 'SELECT settings FROM tenants WHERE id = ?', [
          op.tenant_id,
        ]);
        let settings: JsonObject | null = null;
        try {
          settings = json<JsonObject | null>(t?.settings ?? null);
        } catch {
          /* unreadable settings: the default order */
        }
        try {
          const provider = await this.deps.mail.verifyPrimary(settings, MAIL_VERIFY_TIMEOUT_MS);
          return { observed: provider, prepared: { mail_provider: provider } };
        } catch (e) {
          throw new StepFailure('mail_transport_unreachable', (e as Error).message);
        }
      }
      case 'tenant_activated':
        // Done in complete(), in the transaction that records the step (activate()).
        return {};
    }
  }

  /** `provisioning` → `active`, one winner, audited; anything else fails the step. */
  private async activate(em: EntityManager, tenantId: string, operationId: string, now: number): Promise<void> {
    const n = await exec(
      em,
      "UPDATE tenants SET lifecycle_state = 'active', updated_at = ? WHERE id = ? AND lifecycle_state = 'provisioning'",
      [now, tenantId],
    );
    if (n !== 1) {
      const t = await one<{ lifecycle_state: string }>(em, 'SELECT lifecycle_state FROM tenants WHERE id = ?', [
        tenantId,
      ]);
      throw new StepFailure(
        'tenant_not_provisioning',
        `the tenant is ${t?.lifecycle_state ?? 'missing'}, not provisioning`,
      );
    }
    await audit(em, RUNNER_ACTOR, {
      tenantId,
      action: 'tenant.activate',
      targetType: 'tenant',
      targetId: tenantId,
      summary: {
        operation_id: operationId,
        before: { lifecycle_state: 'provisioning' },
        after: { lifecycle_state: 'active', updated_at: now },
      },
    });
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
      if (op.status !== 'completed' && op.status !== 'blocked' && !opts.signal?.aborted) {
        await this.advance(op.operation_id, opts.signal, async () => {
          await report();
        });
        op = await report();
      }
      if (op.status === 'completed' || op.status === 'blocked' || opts.signal?.aborted) return op;
      const now = Date.now();
      if (now >= deadline) return op;
      // Due again at next_attempt_at (backoff), or held by another runner: look again soon.
      const due = op.next_attempt_at ?? now;
      await sleep(Math.max(20, Math.min(due - now, 500, deadline - now)), opts.signal);
    }
  }
}
