/**
 * `resolve(tenantId, entityId, role?)`: which trust source, if any, may be used for a SAML
 * entity at runtime, and why (./resolution.ts has the rules). Reads the live inventory
 * generation of every source of the tenant that lists the entity, and the sources' settings.
 */
import { createHash } from 'node:crypto';
import type { Database } from '../../db/index.js';
import { TenantScope } from '../../repositories/index.js';
import type { EntityRole } from './metadata/scan.js';
import { decide, type ResolutionDecision, type ResolutionSource } from './resolution.js';

export class FederationResolver {
  constructor(private readonly db: Database) {}

  async resolve(tenantId: string, entityId: string, role?: EntityRole, now = Date.now()): Promise<ResolutionDecision> {
    const scope = new TenantScope(this.db, tenantId);
    const hash = createHash('sha256').update(entityId).digest('hex');
    // The hash keys the index; the id itself is compared too.
    const rows = (await scope.federationEntities.liveByHash(hash)).filter((r) => r.entity_id === entityId);
    const sources: ResolutionSource[] = [];
    for (const id of new Set(rows.map((r) => r.trust_source_id))) {
      const s = await scope.trustSources.get(id);
      if (!s) continue;
      sources.push({
        id: s.id,
        sourceKey: s.source_key,
        lifecycleState: s.lifecycle_state,
        suspendedByMetadataSync: s.suspended_by_metadata_sync,
        runtimeResolution: s.protocol_payload.runtimeResolution ?? {},
      });
    }
    return decide(
      entityId,
      role,
      sources,
      rows.map((r) => ({
        trustSourceId: r.trust_source_id,
        entityId: r.entity_id,
        roles: r.roles,
        registrationAuthority: r.registration_authority,
        entityCategories: r.entity_categories,
        entityCategorySupport: r.entity_category_support,
        validUntil: r.valid_until,
      })),
      now,
    );
  }
}
