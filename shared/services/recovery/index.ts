/**
 * Disaster recovery of a tenant (docs/recovery.md): the state machine (state-machine.ts, no
 * I/O), the effects of its steps (effects.ts: route publication signing, the verify checks, the
 * lookup reprojection), the records shown (views.ts) and the service (service.ts, with its
 * verify run in verify.ts and its reactivation in reactivate.ts); its store is
 * shared/repositories/recovery.ts and shared/repositories/tenant-routes.ts.
 */
export {
  CONFIRMATION_FORMAT,
  confirmationFor,
  DENY_DRAIN_MS,
  OPEN_STATES,
  SMOKE_CHECKS,
  stabilizationEnd,
  VERIFY_LEASE_MS,
  type LookupStage,
  type RecoveryState,
} from './state-machine.js';
export {
  manifestDigest,
  MIGRATION_STREAM_ID,
  ROUTE_PUBLICATION_TYP,
  type RoutePublicationClaims,
  type StepReporter,
  type VerifyProgress,
} from './effects.js';
export {
  toRecoveryView,
  type LookupReprojection,
  type PublicationView,
  type RecoveryDetails,
  type RecoveryTarget,
  type RecoveryView,
  type RouteView,
  type SmokeResult,
} from './views.js';
export { RecoveryService, type BindingDescription } from './service.js';
