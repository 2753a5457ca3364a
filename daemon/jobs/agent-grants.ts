/**
 * `agent-grant-revocation`: delivers the token-family revocation outbox entries an agent grant
 * update writes (docs/agents.md). Runs on every daemon (`lease: false`); entries are claimed
 * one-winner. Every 2 s, and at once when a commit kicks the outbox.
 */
import type { Database } from '../../shared/db/index.js';
import type { AgentGrantService } from '../../shared/services/agents/grants.js';
import type { JobSpec } from './scheduler.js';

export const AGENT_GRANT_REVOCATION_JOB = 'agent-grant-revocation';

export function agentGrantRevocationJob(service: AgentGrantService, jobsDb: Database, holder: string): JobSpec {
  return {
    name: AGENT_GRANT_REVOCATION_JOB,
    schedule: '*/2 * * * * *',
    lease: false,
    logLevel: 'debug',
    run: async (signal) => {
      while (!signal.aborted && (await service.drainRevocations(jobsDb, holder, signal)) > 0);
    },
  };
}
