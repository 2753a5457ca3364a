/**
 * Tenant provisioning (docs/provisioning.md): the state machine (state-machine.ts, no I/O), what
 * each step does (effects.ts), the records shown (views.ts), the runner that advances an operation's steps
 * (runner.ts) and the service that creates, retries and waits for them (service.ts); its store is
 * shared/repositories/provisioning.ts.
 */
export {
  MAIL_VERIFY_TIMEOUT_MS,
  ISOLATION_POLICY,
  OPERATION_KIND,
  PROVISIONING_LEASE_MS,
  PROVISIONING_RETRY_MAX_MS,
  PROVISIONING_STEPS,
  provisioningBackoffMs,
  type OperationStatus,
  type ProvisioningOptions,
  type StepKey,
} from './state-machine.js';
export { StepFailure, type StepOutcome } from './effects.js';
export type { ProvisioningEventView, ProvisioningOperationView, ProvisioningStepView } from './views.js';
export {
  ProvisioningService,
  type ProgressListener,
  type ProvisioningDeps,
  type ProvisioningLogger,
  type WaitOptions,
} from './service.js';
