/**
 * The scheduled scan that keeps upstream tokens fresh (shared/services/external-token-refresh/scan.ts):
 * every 30 s, leased (one daemon scans at a time; a crashed holder blocks the others for at
 * most the lease). Each run visits the next tenants whose configuration is enabled, round robin;
 * tenants with `enabled: false` are never visited here (the manual run stays available). The
 * per-link leases keep a link to one upstream call even when a manual run or a second scanner
 * overlaps with it.
 */
import type { ExternalTokenRefreshService } from '../../shared/services/external-token-refresh/scan.js';
import type { JobSpec } from './scheduler.js';

export const EXTERNAL_TOKEN_REFRESH_JOB = 'external-token-refresh';

export function externalTokenRefreshJob(scan: ExternalTokenRefreshService): JobSpec {
  return {
    name: EXTERNAL_TOKEN_REFRESH_JOB,
    schedule: '*/30 * * * * *',
    leaseMs: 5 * 60_000,
    logLevel: 'debug',
    run: async (signal) => {
      await scan.runScheduled(signal);
    },
  };
}
