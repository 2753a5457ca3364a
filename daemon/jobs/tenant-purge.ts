/**
 * Purges offboarded tenants past their grace (docs/tenant-lifecycle.md, "Offboarding"): each is
 * moved to `purging`, emptied in batches of one bounded DELETE each, then left as a `deleted`
 * tombstone. A run stops between statements when its lease's signal aborts, and the next run
 * carries on where it stopped (a `purging` tenant is taken first).
 */
import type { TenantDirectoryService } from '../../shared/services/tenant-directory.js';
import type { JobSpec } from './scheduler.js';

export const TENANT_PURGE_JOB = 'tenant-purge';

/** @param tenants the jobs side's service (shared/container.ts), on the jobs connection */
export function tenantPurgeJob(tenants: Pick<TenantDirectoryService, 'purgeDue'>): JobSpec {
  return {
    name: TENANT_PURGE_JOB,
    schedule: '47 */10 * * * *', // every 10 minutes
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await tenants.purgeDue({ signal });
    },
  };
}
