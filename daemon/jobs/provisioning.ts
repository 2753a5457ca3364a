/**
 * The tenant provisioning runner as a job (shared/services/provisioning/). It runs on every
 * daemon (`lease: false`): each operation is claimed one-winner with its own lease, so several
 * daemons, and an `iam tenants create` waiting for its tenant, share the work without doing a
 * step twice. Every second, and at once when a tenant is created or a retry is accepted.
 */
import type { ProvisioningService } from '../../shared/services/provisioning/index.js';
import type { JobSpec } from './scheduler.js';

export const PROVISIONING_JOB = 'provisioning';

export function provisioningJob(runner: ProvisioningService): JobSpec {
  return {
    name: PROVISIONING_JOB,
    schedule: '* * * * * *',
    lease: false,
    logLevel: 'debug',
    run: async (signal) => {
      await runner.runDue(signal);
    },
  };
}
