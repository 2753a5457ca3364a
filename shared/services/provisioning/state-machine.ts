/**
 * The provisioning state machine, without I/O: the steps in the order they run, the statuses
 * of an operation and how a step's outcome moves it, and the retry backoff.
 *
 *   operation: queued → running → completed
 *                          ↘ retry_scheduled → running …   (a step failed, attempts left)
 *                          ↘ blocked → (an operator's retry) queued
 *   step:      pending → running → completed | retry_scheduled | blocked → (retry) pending
 *
 * A failed step is retried with exponential backoff; after `maxAttempts` failures of one step
 * the operation is blocked until an operator retries it. See docs/provisioning.md.
 */

/** The steps, in the order they run. */
export const PROVISIONING_STEPS = [
  'request_accepted',
  'schema_verified',
  'signing_key_ready',
  'mail_transport_verified',
  'tenant_activated',
] as const;
export type StepKey = (typeof PROVISIONING_STEPS)[number];

export const FIRST_STEP: StepKey = PROVISIONING_STEPS[0];
export const LAST_STEP: StepKey = PROVISIONING_STEPS[PROVISIONING_STEPS.length - 1];

/**
 * Operation statuses: `queued` → `running` → `completed`, or → `retry_scheduled` → `running` …,
 * or → `blocked` → (retry) `queued`.
 */
export type OperationStatus = 'queued' | 'running' | 'retry_scheduled' | 'blocked' | 'completed';

/** The statuses a runner may claim an operation in (when it is due and not leased). */
export const RUNNABLE_STATUSES: readonly OperationStatus[] = ['queued', 'retry_scheduled', 'running'];

/** This service keeps every tenant in one database, rows scoped by tenant id (the repository layer). */
export const ISOLATION_POLICY = 'shared_database';
export const OPERATION_KIND = 'tenant_create';
/** Backoff never grows beyond this, however many attempts are allowed. */
export const PROVISIONING_RETRY_MAX_MS = 300_000;
/** How long a claim lasts; every step's write renews it. Longer than any step's own timeout. */
export const PROVISIONING_LEASE_MS = 60_000;
/** An SMTP relay that has not answered within this is unreachable for provisioning's purpose. */
export const MAIL_VERIFY_TIMEOUT_MS = 5_000;

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

/** The step after `key`, or undefined after the last. */
export function nextStep(key: StepKey): StepKey | undefined {
  return PROVISIONING_STEPS[PROVISIONING_STEPS.indexOf(key) + 1];
}

/** The step a runner works on next: the first one not completed (completed steps are never run again). */
export function stepToRun<S extends { step_key: string; status: string }>(steps: S[]): S | undefined {
  return steps.find((s) => s.status !== 'completed');
}

/** Where a failed step leaves the operation. */
export interface FailureTransition {
  status: Extract<OperationStatus, 'blocked' | 'retry_scheduled'>;
  /** Consecutive failures of the step, this one included. */
  failures: number;
  /** When it is due again; null once blocked (only an operator's retry requeues it). */
  nextAttemptAt: number | null;
  blocked: boolean;
}

/** The step failed for the `failures`-th time in a row (counting this one) at `now`. */
export function afterFailure(failures: number, now: number, options: ProvisioningOptions): FailureTransition {
  const blocked = failures >= options.maxAttempts;
  return {
    status: blocked ? 'blocked' : 'retry_scheduled',
    failures,
    nextAttemptAt: blocked ? null : now + provisioningBackoffMs(failures, options.retryBaseMs),
    blocked,
  };
}

/** A waiting caller is done once the operation is completed or blocked. */
export const isSettled = (status: string): boolean => status === 'completed' || status === 'blocked';
