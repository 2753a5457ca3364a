/**
 * The unused-client expiry (docs/registration.md, "Unused clients"): a client registered
 * anonymously that no token was ever issued to is deleted once its tenant's
 * `unusedClientTtlSeconds` (default 7 days; 0: never) has passed since its registration. A
 * registration a token was issued to is marked used when the scan first sees it, and never
 * looked at again. Deletion is the admin delete (ClientLifecycleService.delete), audited with
 * the system as the actor. Registrations admitted by an initial access token are an operator's
 * and never expire so.
 */
import type { Database } from '../../db/index.js';
import { RegistrationLookups, TenantRepository, TenantScope } from '../../repositories/index.js';
import { DEFAULT_UNUSED_CLIENT_TTL_SECONDS } from '../../schemas/registration.js';
import type { Actor } from '../audit.js';
import type { ClientLifecycleService } from '../client-lifecycle.js';
import { registrationPolicyOf } from './policy.js';

/** The shortest TTL a tenant may set: candidates younger than this are not even read. */
const MIN_TTL_MS = 300_000;
const ACTOR: Actor = { type: 'system', id: 'registration-expiry' };

export class UnusedClientExpiry {
  constructor(
    private readonly ds: Database,
    private readonly lifecycle: () => ClientLifecycleService,
  ) {}

  /** One pass at `now` (ms): returns how many clients it deleted and how many it found used. */
  async run(now: number, batch = 100, signal?: AbortSignal): Promise<{ deleted: number; used: number }> {
    let deleted = 0;
    let used = 0;
    const tenants = await new RegistrationLookups(this.ds).tenantsWithUnused(now - MIN_TTL_MS, batch);
    for (const tenantId of tenants) {
      if (signal?.aborted) break;
      const t = await new TenantRepository(this.ds).get(tenantId);
      if (!t) continue;
      const ttl =
        registrationPolicyOf(t.settings?.registration).unusedClientTtlSeconds ?? DEFAULT_UNUSED_CLIENT_TTL_SECONDS;
      const scope = new TenantScope(this.ds, tenantId);
      for (const reg of await scope.registrations.unusedBefore(now - MIN_TTL_MS, batch)) {
        if (await scope.registrations.tokensIssued(reg.client_id)) {
          await this.ds.transaction((tx) => new TenantScope(tx, tenantId).registrations.markUsed(reg.client_id, now));
          used++;
        } else if (ttl > 0 && reg.created_at + ttl * 1000 <= now) {
          await this.lifecycle().delete(tenantId, reg.client_id, ACTOR);
          deleted++;
        }
      }
    }
    return { deleted, used };
  }
}
