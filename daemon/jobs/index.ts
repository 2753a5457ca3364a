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
 * | `tenant-purge` | every 10 min                | 5 min | purges offboarded tenants past their grace, in batches |
 */
import type { Logger } from 'pino';
import type { Services } from '../../shared/container.js';
import { MAIL_OUTBOX_JOB, MailDeliverer, mailOutboxJob, type MailOutboxOptions } from './mail-outbox.js';
import { outboxPurgeJob } from './outbox-purge.js';
import { authPurgeJob } from './auth-purge.js';
import { Scheduler } from './scheduler.js';
import { AGENT_GRANT_REVOCATION_JOB, agentGrantRevocationJob } from './agent-grants.js';
import { dataExportJob, dataExportPurgeJob } from './data-export.js';
import { idempotencyPurgeJob } from './idempotency-purge.js';
import { PROVISIONING_JOB, provisioningJob } from './provisioning.js';
import { CLAIM_RENAME_JOB, claimRenameJob } from './claim-rename.js';
import { externalTokenRefreshJob } from './external-token-refresh.js';
import { approvalExpiryJob } from './approval-expiry.js';
import { registrationExpiryJob } from './registration-expiry.js';
import { AUDIT_WEBHOOK_JOB, auditWebhookJob, PLUGIN_PROVISIONING_JOB, pluginProvisioningJob } from './plugins.js';
import { federationPollJob } from './federation-poll.js';
import { tenantPurgeJob } from './tenant-purge.js';
import type { JobObserver } from '../../shared/metrics.js';

export interface Jobs {
  scheduler: Scheduler;
  deliverer: MailDeliverer;
  /** Stops scheduling and waits (bounded) for running jobs; see Scheduler.stop. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface JobDeps {
  /**
   * The services on the jobs database (`createDataSource(config.database, 'jobs')`, not the
   * request one): `buildServices(jobsDs, …, { requests })` on MySQL, the request side's own
   * container on SQLite. The runners, the deliverers and the scans are its.
   */
  jobs: Services;
  /**
   * The request side's services: their kicks wake the runners (a tenant created, a rename or a
   * plugin change accepted by a request), and the plugin and agent grant jobs call theirs with
   * the jobs connection passed in.
   */
  requests: Services;
  logger: Logger;
  /** Tuning for tests; production uses the defaults. */
  mailOutbox?: Partial<MailOutboxOptions>;
  holder?: string;
  /** Job runs, durations and lag for /metrics (docs/metrics.md), when IAM_METRICS_PORT is set. */
  metrics?: JobObserver;
}

export function startJobs(deps: JobDeps): Jobs {
  const { jobs, requests } = deps;
  const ds = jobs.ds;
  // One outbox per daemon (the jobs side shares the request side's): a commit's kick reaches these.
  const outbox = jobs.outbox;
  const scheduler = new Scheduler(ds, deps.logger, { holder: deps.holder, metrics: deps.metrics });
  const deliverer = new MailDeliverer(ds, outbox, jobs.mail, deps.logger, scheduler.holder, deps.mailOutbox);
  scheduler.register(mailOutboxJob(deliverer));
  scheduler.register(outboxPurgeJob(ds));
  scheduler.register(authPurgeJob(ds));
  scheduler.register(dataExportJob(ds, { mail: outbox, templates: jobs.mailTemplates }));
  scheduler.register(dataExportPurgeJob(ds));
  scheduler.register(idempotencyPurgeJob(jobs.idempotency));
  scheduler.register(approvalExpiryJob(jobs.approvals));
  scheduler.register(registrationExpiryJob(jobs.registration.expiry));
  scheduler.register(externalTokenRefreshJob(jobs.externalTokenRefresh(scheduler.holder)));
  scheduler.register(federationPollJob(jobs.federationPoller));
  scheduler.register(tenantPurgeJob(jobs.tenantDirectory));
  // The provisioning runner works on the jobs connection; requests only kick it.
  scheduler.register(provisioningJob(jobs.provisioning));
  // A tenant created or a retry accepted here starts at once, not at the next tick.
  const unsubscribeProvisioning = requests.provisioning.onKick(() => {
    void scheduler.trigger(PROVISIONING_JOB);
  });
  // The claim rename runner too (its batches are writes on the jobs connection).
  scheduler.register(claimRenameJob(jobs.claimRename));
  // A rename accepted here starts copying at once, not at the next tick.
  const unsubscribeClaimRename = requests.claimRename.onKick(() => {
    void scheduler.trigger(CLAIM_RENAME_JOB);
  });
  // Platform plugins: the audit webhook's deliverer on the jobs connection; the request side's
  // plugin service, whose kicks come from the admin API, advances provisioning on the jobs one.
  scheduler.register(auditWebhookJob(jobs.auditWebhookDeliverer, scheduler.holder));
  scheduler.register(pluginProvisioningJob(requests.plugins, ds, scheduler.holder));
  const unsubscribePlugins: (() => void)[] = [
    outbox.onKick(() => void scheduler.trigger(AUDIT_WEBHOOK_JOB)),
    requests.plugins.onKick(() => void scheduler.trigger(PLUGIN_PROVISIONING_JOB)),
  ];
  scheduler.register(agentGrantRevocationJob(requests.agentGrants, ds, scheduler.holder));
  // A PATCH that committed a revocation entry has it delivered now, not at the next tick.
  unsubscribePlugins.push(outbox.onKick(() => void scheduler.trigger(AGENT_GRANT_REVOCATION_JOB)));
  // A commit that enqueued mail wakes the deliverer now instead of at the next tick: a drain
  // under way takes it in its next claim, otherwise the job starts one.
  const unsubscribe = outbox.onKick(() => {
    if (!deliverer.wake()) void scheduler.trigger(MAIL_OUTBOX_JOB);
  });
  scheduler.start();
  // Mail left behind by a crash or a stopped daemon goes out at start, not at the first tick.
  void scheduler.trigger(MAIL_OUTBOX_JOB);
  void scheduler.trigger(PROVISIONING_JOB);
  // A rename a stopped daemon left behind resumes from its checkpoint at start.
  void scheduler.trigger(CLAIM_RENAME_JOB);
  void scheduler.trigger(AGENT_GRANT_REVOCATION_JOB);
  void scheduler.trigger(AUDIT_WEBHOOK_JOB);
  void scheduler.trigger(PLUGIN_PROVISIONING_JOB);
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
