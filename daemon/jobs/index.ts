/**
 * Every background job the daemon runs, registered in this one place.
 *
 * | Job            | When                        | Lease | What                                   |
 * |----------------|-----------------------------|-------|----------------------------------------|
 * | `mail-outbox`  | every 2 s, and on kick()    | none  | delivers outbox mail (claims rows)     |
 * | `outbox-purge` | every 10 min                | 5 min | deletes old delivered and failed rows  |
 * | `auth-purge`   | every 10 min                | 5 min | deletes expired codes, requests, tokens |
 * | `data-export`  | every 2 s                   | 1 min | builds pending personal data exports   |
 * | `data-export-purge` | every 10 min           | 5 min | deletes exports past their 24 h retention |
 * | `idempotency-purge` | every 10 min           | 5 min | deletes Idempotency-Key rows past their 24 h retention |
 * | `provisioning` | every 1 s, and on kick()    | none  | advances provisioning operations (each claimed, leased) |
 * | `claim-rename` | every 1 s, and on kick()    | none  | advances custom claim renames (each claimed, leased) |
 * | `external-token-refresh` | every 30 s  | 5 min | refreshes due upstream tokens (round robin) |
 * | `audit-webhook` | every 2 s, and on kick()   | none  | delivers the audit webhook plugin's outbox entries |
 * | `plugin-provisioning` | every 1 s, and on kick() | none | advances plugin provisioning operations (each claimed) |
 * | `federation-metadata-poll` | every minute    | 15 min | polls due SAML trust sources, fair across tenants |
 * | `approval-expiry` | every 15 s                | 1 min | expires approval requests with a step past its deadline |
 * | `agent-grant-revocation` | every 2 s, and on kick() | none | revokes superseded agent grant token families |
 */
import type { Logger } from 'pino';
import type { Database } from '../../shared/db/index.js';
import type { EmailProviders } from '../../shared/services/mail/index.js';
import type { Outbox } from '../../shared/services/outbox.js';
import { MAIL_OUTBOX_JOB, MailDeliverer, mailOutboxJob, type MailOutboxOptions } from './mail-outbox.js';
import { outboxPurgeJob } from './outbox-purge.js';
import { authPurgeJob } from './auth-purge.js';
import { Scheduler } from './scheduler.js';
import { AGENT_GRANT_REVOCATION_JOB, agentGrantRevocationJob } from './agent-grants.js';
import type { AgentGrantService } from '../../shared/services/agents/grants.js';
import { dataExportJob, dataExportPurgeJob } from './data-export.js';
import { idempotencyPurgeJob } from './idempotency-purge.js';
import { PROVISIONING_JOB, provisioningJob } from './provisioning.js';
import type { ProvisioningService } from '../../shared/services/provisioning/index.js';
import type { ClaimRenameService } from '../../shared/services/claim-rename.js';
import { CLAIM_RENAME_JOB, claimRenameJob } from './claim-rename.js';
import type { ExternalTokenRefreshService } from '../../shared/services/external-token-refresh/scan.js';
import { externalTokenRefreshJob } from './external-token-refresh.js';
import type { AuditWebhookDeliverer } from '../../shared/services/plugins/audit-webhook.js';
import type { PluginService } from '../../shared/services/plugins/index.js';
import type { ApprovalService } from '../../shared/services/approvals.js';
import { approvalExpiryJob } from './approval-expiry.js';
import { AUDIT_WEBHOOK_JOB, auditWebhookJob, PLUGIN_PROVISIONING_JOB, pluginProvisioningJob } from './plugins.js';
import type { MetadataPoller } from '../../shared/services/federation/metadata-poller.js';
import { federationPollJob } from './federation-poll.js';
import type { JobObserver } from '../../shared/metrics.js';

export interface Jobs {
  scheduler: Scheduler;
  deliverer: MailDeliverer;
  /** Stops scheduling and waits (bounded) for running jobs; see Scheduler.stop. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface JobDeps {
  /** The jobs database (`createDataSource(config.database, 'jobs')`), not the request one. */
  ds: Database;
  logger: Logger;
  outbox: Outbox;
  mail: EmailProviders;
  /** Tuning for tests; production uses the defaults. */
  mailOutbox?: Partial<MailOutboxOptions>;
  holder?: string;
  /** The runner (on the jobs DataSource) and the service whose kicks wake it (the requests'). */
  provisioning?: { runner: ProvisioningService; kicks: Pick<ProvisioningService, 'onKick'> };
  /** The claim rename runner (on the jobs DataSource) and the service whose kicks wake it. */
  claimRename?: { runner: ClaimRenameService; kicks: Pick<ClaimRenameService, 'onKick'> };
  /** The upstream token scan on the jobs DataSource, leasing links as this daemon's scheduler holder. */
  externalTokenRefresh?: (holder: string) => ExternalTokenRefreshService;
  /** Platform plugins: the audit webhook's deliverer (on the jobs connection) and the plugin service. */
  plugins?: { auditWebhook: AuditWebhookDeliverer; service: PluginService };
  /** The SAML metadata poller, on the jobs DataSource. */
  federationPoller?: MetadataPoller;
  /** Approval requests on the jobs DataSource: the expiry job closes overdue ones. */
  approvalExpiry?: Pick<ApprovalService, 'expireDue'>;
  /** Agent grants: the revocation outbox entries' deliverer (its jobs run on `ds`). */
  agentGrants?: AgentGrantService;
  /** Job runs, durations and lag for /metrics (docs/metrics.md), when IAM_METRICS_PORT is set. */
  metrics?: JobObserver;
}

export function startJobs(deps: JobDeps): Jobs {
  const scheduler = new Scheduler(deps.ds, deps.logger, { holder: deps.holder, metrics: deps.metrics });
  const deliverer = new MailDeliverer(deps.ds, deps.outbox, deps.mail, deps.logger, scheduler.holder, deps.mailOutbox);
  scheduler.register(mailOutboxJob(deliverer));
  scheduler.register(outboxPurgeJob(deps.ds));
  scheduler.register(authPurgeJob(deps.ds));
  scheduler.register(dataExportJob(deps.ds, { mail: deps.outbox }));
  scheduler.register(dataExportPurgeJob(deps.ds));
  scheduler.register(idempotencyPurgeJob(deps.ds));
  if (deps.approvalExpiry) scheduler.register(approvalExpiryJob(deps.approvalExpiry));
  if (deps.externalTokenRefresh)
    scheduler.register(externalTokenRefreshJob(deps.externalTokenRefresh(scheduler.holder)));
  if (deps.federationPoller) scheduler.register(federationPollJob(deps.federationPoller));
  const unsubscribeProvisioning = deps.provisioning
    ? (scheduler.register(provisioningJob(deps.provisioning.runner)),
      // A tenant created or a retry accepted here starts at once, not at the next tick.
      deps.provisioning.kicks.onKick(() => {
        void scheduler.trigger(PROVISIONING_JOB);
      }))
    : () => undefined;
  const unsubscribeClaimRename = deps.claimRename
    ? (scheduler.register(claimRenameJob(deps.claimRename.runner)),
      // A rename accepted here starts copying at once, not at the next tick.
      deps.claimRename.kicks.onKick(() => {
        void scheduler.trigger(CLAIM_RENAME_JOB);
      }))
    : () => undefined;
  const unsubscribePlugins: (() => void)[] = [];
  if (deps.plugins) {
    const { auditWebhook, service } = deps.plugins;
    scheduler.register(auditWebhookJob(auditWebhook, scheduler.holder));
    scheduler.register(pluginProvisioningJob(service, deps.ds, scheduler.holder));
    unsubscribePlugins.push(
      deps.outbox.onKick(() => void scheduler.trigger(AUDIT_WEBHOOK_JOB)),
      service.onKick(() => void scheduler.trigger(PLUGIN_PROVISIONING_JOB)),
    );
  }
  if (deps.agentGrants) {
    scheduler.register(agentGrantRevocationJob(deps.agentGrants, deps.ds, scheduler.holder));
    // A PATCH that committed a revocation entry has it delivered now, not at the next tick.
    unsubscribePlugins.push(deps.outbox.onKick(() => void scheduler.trigger(AGENT_GRANT_REVOCATION_JOB)));
  }
  // A commit that enqueued mail wakes the deliverer now instead of at the next tick: a drain
  // under way takes it in its next claim, otherwise the job starts one.
  const unsubscribe = deps.outbox.onKick(() => {
    if (!deliverer.wake()) void scheduler.trigger(MAIL_OUTBOX_JOB);
  });
  scheduler.start();
  // Mail left behind by a crash or a stopped daemon goes out at start, not at the first tick.
  void scheduler.trigger(MAIL_OUTBOX_JOB);
  if (deps.provisioning) void scheduler.trigger(PROVISIONING_JOB);
  // A rename a stopped daemon left behind resumes from its checkpoint at start.
  if (deps.claimRename) void scheduler.trigger(CLAIM_RENAME_JOB);
  if (deps.agentGrants) void scheduler.trigger(AGENT_GRANT_REVOCATION_JOB);
  if (deps.plugins) {
    void scheduler.trigger(AUDIT_WEBHOOK_JOB);
    void scheduler.trigger(PLUGIN_PROVISIONING_JOB);
  }
  return {
    scheduler,
    deliverer,
    stop: async (timeoutMs) => {
      unsubscribe();
      unsubscribeProvisioning();
      unsubscribeClaimRename();
      for (const u of unsubscribePlugins) u();
      await scheduler.stop(timeoutMs);
    },
  };
}
