/**
 * The SAML metadata poller as a job (shared/services/federation/metadata-poller.ts). Leased
 * (one daemon runs a round at a time), every minute: each due trust source is also claimed
 * with its own row lease, so a manual `iam federation poll` and the job never poll the same
 * source at once. A round polls IAM_FEDERATION_POLL_CONCURRENCY sources at a time, fair
 * across tenants, each within the document deadline, and lasts while polls are in flight
 * (sources falling due meanwhile join it). The download and the signature check do not block
 * the event loop (a stream to disk, then a worker thread).
 */
import type { MetadataPoller } from '../../shared/services/federation/metadata-poller.js';
import type { JobSpec } from './scheduler.js';

export const FEDERATION_POLL_JOB = 'federation-metadata-poll';

export function federationPollJob(poller: MetadataPoller): JobSpec {
  return {
    name: FEDERATION_POLL_JOB,
    schedule: '0 * * * * *',
    leaseMs: 15 * 60_000,
    run: async (signal) => {
      await poller.runDue(signal);
    },
  };
}
