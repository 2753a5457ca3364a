/**
 * Deletes anonymously registered clients that no token was ever issued to once their tenant's
 * `unusedClientTtlSeconds` has passed (docs/registration.md, "Unused clients"). The lease keeps
 * one daemon at it at a time; a delete of a client already gone is a 404 the next pass skips.
 */
import type { UnusedClientExpiry } from '../../shared/services/registration/index.js';
import type { JobSpec } from './scheduler.js';

export const REGISTRATION_EXPIRY_JOB = 'registration-expiry';

export function registrationExpiryJob(expiry: Pick<UnusedClientExpiry, 'run'>): JobSpec {
  return {
    name: REGISTRATION_EXPIRY_JOB,
    schedule: '17 */10 * * * *', // every ten minutes
    leaseMs: 300_000,
    run: async (signal) => {
      await expiry.run(Date.now(), 100, signal);
    },
  };
}
