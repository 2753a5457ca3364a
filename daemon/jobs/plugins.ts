/**
 * The platform plugins' jobs (shared/services/plugins/). Both run on every daemon
 * (`lease: false`) and claim their own work one-winner:
 * - `audit-webhook`: delivers the audit webhook's outbox entries in signed batches; every 2 s,
 *   and at once when a commit kicks the outbox.
 * - `plugin-provisioning`: advances plugin provisioning operations (pending → succeeded or
 *   failed); every second, and at once when a plugin is enabled here.
 */
import type { Database } from '../../shared/db/index.js';
import type { AuditWebhookDeliverer } from '../../shared/services/plugins/audit-webhook.js';
import type { PluginService } from '../../shared/services/plugins/index.js';
import type { JobSpec } from './scheduler.js';

export const AUDIT_WEBHOOK_JOB = 'audit-webhook';
export const PLUGIN_PROVISIONING_JOB = 'plugin-provisioning';

export function auditWebhookJob(deliverer: AuditWebhookDeliverer, holder: string): JobSpec {
  return {
    name: AUDIT_WEBHOOK_JOB,
    schedule: '*/2 * * * * *',
    lease: false,
    logLevel: 'debug',
    run: async (signal) => {
      // Until nothing is due: a burst of events is sent in a few runs, not one page per tick.
      while (!signal.aborted && (await deliverer.drain(holder, signal)) > 0);
    },
  };
}

export function pluginProvisioningJob(service: PluginService, jobsDb: Database, holder: string): JobSpec {
  return {
    name: PLUGIN_PROVISIONING_JOB,
    schedule: '* * * * * *',
    lease: false,
    logLevel: 'debug',
    run: async (signal) => {
      await service.advanceProvisioning(jobsDb, holder, signal);
    },
  };
}
