/**
 * Field-mapping sets (docs/federation.md, "Field-mapping sets"): a source's attributes (SAML
 * attribute names, SCIM paths, CSV columns, directory attributes) mapped to user fields and
 * custom claim keys. Trust sources name them (`idpFieldMappingSetId`, `spFieldMappingSetId`),
 * so a set that a source names cannot be deleted: the answer is 409 naming those sources.
 */
import { isUniqueViolation, type Database } from '../../db/index.js';
import { newId } from '../../crypto.js';
import { ApiError, badRequest, conflict, notFound } from '../../errors.js';
import { TenantScope, type FieldMapping, type FieldMappingSetRow } from '../../repositories/index.js';
import {
  FieldMappingSetInput,
  FieldMappingSetUpdateInput,
  type FieldMappingSetUpdateInput as UpdateInput,
} from '../../schemas/federation.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import { checkMembershipSource } from '../scim/mapped-memberships.js';

export const MAPPING_SET_PREFIX = 'fms';
export const MAPPING_SETS_DEFAULT_LIMIT = 100;
export const MAPPING_SETS_MAX_LIMIT = 500;

/** The user fields a mapping may fill. */
export const USER_FIELDS = [
  'email',
  'name',
  'given_name',
  'family_name',
  'preferred_username',
  'external_id',
  'locale',
  'phone_number',
] as const;

/**
 * Claims the service itself sets (RFC 7519 §4.1, OpenID Connect Core §2 and §5.1 for the
 * identity, RFC 9068 §2.2 for access tokens, and our `tenant`): a mapping may not forge them.
 */
export const RESERVED_CLAIMS = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'auth_time',
  'nonce',
  'acr',
  'amr',
  'azp',
  'at_hash',
  'c_hash',
  'sid',
  'scope',
  'client_id',
  'cnf',
  'act',
  'may_act',
  'tenant',
  'tenant_id',
  'email_verified',
]);

const CLAIM_KEY = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

export interface FieldMappingSetView {
  id: string;
  tenantId: string;
  setKey: string;
  displayName: string;
  description: string | null;
  sourceType: string;
  sourceProfileId: string | null;
  lifecycleState: string;
  mappings: FieldMapping[];
  createdAt: number;
  updatedAt: number;
}

export function mappingSetView(r: FieldMappingSetRow): FieldMappingSetView {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    setKey: r.set_key,
    displayName: r.display_name,
    description: r.description,
    sourceType: r.source_type,
    sourceProfileId: r.source_profile_id,
    lifecycleState: r.lifecycle_state,
    mappings: r.mappings,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const fail = (field: string, message: string): ApiError => badRequest(`${field}: ${message}`, [{ field, message }]);

export class FieldMappingSetService {
  constructor(private readonly db: Database) {}

  async create(tenantId: string, raw: unknown, actor: Actor): Promise<FieldMappingSetView> {
    const input = parseInput(FieldMappingSetInput, raw, 'body');
    const mappings = this.mappingsFrom(input.mappings, input.sourceType);
    try {
      return await this.db.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId);
        await this.checkProfile(scope, input);
        const now = Date.now();
        const row: FieldMappingSetRow = {
          id: newId(MAPPING_SET_PREFIX),
          tenant_id: tenantId,
          set_key: input.setKey,
          display_name: input.displayName,
          description: input.description ?? null,
          source_type: input.sourceType,
          source_profile_id: input.sourceProfileId ?? null,
          lifecycle_state: input.lifecycleState ?? 'active',
          mappings,
          created_at: now,
          updated_at: now,
        };
        await scope.fieldMappingSets.insert(row);
        await audit(tx, actor, {
          tenantId,
          action: 'field_mapping_set.create',
          targetType: 'field_mapping_set',
          targetId: row.id,
          summary: { setKey: row.set_key, sourceType: row.source_type, mappings: mappings.length },
        });
        return mappingSetView(row);
      });
    } catch (e) {
      if (isUniqueViolation(e))
        throw conflict(`A field-mapping set with setKey ${input.setKey} exists in this tenant.`, { field: 'setKey' });
      throw e;
    }
  }

  async list(tenantId: string, limit = MAPPING_SETS_DEFAULT_LIMIT, offset = 0): Promise<FieldMappingSetView[]> {
    const n = Math.min(Math.max(limit, 1), MAPPING_SETS_MAX_LIMIT);
    return (await new TenantScope(this.db, tenantId).fieldMappingSets.list(n, Math.max(offset, 0))).map(mappingSetView);
  }

  /** By id (`fms_…`) or setKey. */
  async get(tenantId: string, idOrKey: string): Promise<FieldMappingSetView> {
    return mappingSetView(await this.row(new TenantScope(this.db, tenantId), idOrKey));
  }

  /** Replaces the set's fields (its key stays). */
  async update(tenantId: string, idOrKey: string, raw: unknown, actor: Actor): Promise<FieldMappingSetView> {
    const input = parseInput(FieldMappingSetUpdateInput, raw, 'body');
    const mappings = this.mappingsFrom(input.mappings, input.sourceType);
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const before = await this.row(scope, idOrKey);
      await this.checkProfile(scope, input);
      const after: FieldMappingSetRow = {
        ...before,
        display_name: input.displayName,
        description: input.description ?? null,
        source_type: input.sourceType,
        source_profile_id: input.sourceProfileId ?? null,
        lifecycle_state: input.lifecycleState ?? before.lifecycle_state,
        mappings,
        updated_at: Math.max(Date.now(), before.updated_at + 1),
      };
      await scope.fieldMappingSets.update(after);
      await audit(tx, actor, {
        tenantId,
        action: 'field_mapping_set.update',
        targetType: 'field_mapping_set',
        targetId: before.id,
        summary: { setKey: before.set_key, mappings: mappings.length },
      });
      return mappingSetView(after);
    });
  }

  /** Deletes a set no trust source names; 409 `mapping_set_in_use` naming the sources otherwise. */
  async delete(tenantId: string, idOrKey: string, actor: Actor): Promise<void> {
    await this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const set = await this.row(scope, idOrKey);
      const users = await scope.trustSources.referencingSet(set.id);
      if (users.length > 0) {
        throw new ApiError(
          409,
          'mapping_set_in_use',
          `Field-mapping set ${set.set_key} is named by federation trust source(s) ` +
            `${users.map((u) => u.source_key).join(', ')}; change those sources first.`,
          { sources: users.map((u) => ({ id: u.id, sourceKey: u.source_key })) },
        );
      }
      await scope.fieldMappingSets.delete(set.id);
      await audit(tx, actor, {
        tenantId,
        action: 'field_mapping_set.delete',
        targetType: 'field_mapping_set',
        targetId: set.id,
        summary: { setKey: set.set_key },
      });
    });
  }

  /** The tenant's active sets of a source type (`scim`: the sets SCIM provisioning applies). */
  async activeOf(tenantId: string, sourceType: string): Promise<FieldMappingSetView[]> {
    const rows = await new TenantScope(this.db, tenantId).fieldMappingSets.ofSourceType(sourceType);
    return rows.filter((r) => r.lifecycle_state === 'active').map(mappingSetView);
  }

  /**
   * The sets with a mapping to `target` of `targetType` (a group's display name or a role's
   * name, compared case-insensitively): what refuses deleting that group or role (409).
   */
  async naming(
    tenantId: string,
    targetType: 'group' | 'role',
    target: string,
  ): Promise<{ id: string; setKey: string }[]> {
    const rows = await new TenantScope(this.db, tenantId).fieldMappingSets.ofSourceType('scim');
    const t = target.toLowerCase();
    return rows
      .filter((r) => r.mappings.some((m) => m.targetType === targetType && m.target.toLowerCase() === t))
      .map((r) => ({ id: r.id, setKey: r.set_key }));
  }

  private async row(scope: TenantScope, idOrKey: string): Promise<FieldMappingSetRow> {
    const repo = scope.fieldMappingSets;
    const r = idOrKey.startsWith(`${MAPPING_SET_PREFIX}_`) ? await repo.get(idOrKey) : await repo.byKey(idOrKey);
    if (!r) throw notFound(`Field-mapping set ${idOrKey}`);
    return r;
  }

  /** A named source profile must exist in the tenant and be of the set's source type. */
  private async checkProfile(scope: TenantScope, input: Pick<UpdateInput, 'sourceProfileId' | 'sourceType'>) {
    if (!input.sourceProfileId) return;
    const p = await scope.sourceProfiles.get(input.sourceProfileId);
    if (!p) throw fail('body.sourceProfileId', `names no source profile of this tenant (${input.sourceProfileId})`);
    if (p.source_type !== input.sourceType)
      throw fail('body.sourceType', `must be ${p.source_type}, the source type of profile ${p.profile_key}`);
  }

  /** Targets are valid user fields or claim keys, each filled by at most one mapping. */
  private mappingsFrom(input: UpdateInput['mappings'], sourceType: string): FieldMapping[] {
    const seen = new Map<string, number>();
    return input.map((m, i) => {
      const field = `body.mappings.${i}.target`;
      if (m.targetType === 'user' && !(USER_FIELDS as readonly string[]).includes(m.target))
        throw fail(field, `must be a user field: ${USER_FIELDS.join(', ')}`);
      if (m.targetType === 'claim') {
        if (!CLAIM_KEY.test(m.target))
          throw fail(field, 'must be a claim key: a letter or _ first, then letters, digits, _ . : - (at most 128)');
        if (RESERVED_CLAIMS.has(m.target)) throw fail(field, `${m.target} is set by the service and cannot be mapped`);
      }
      // A group or role is held while a SCIM filter matches the provisioned user: only SCIM sets.
      if (m.targetType === 'group' || m.targetType === 'role') {
        if (sourceType !== 'scim')
          throw fail(`body.mappings.${i}.targetType`, `${m.targetType} targets are for sourceType scim only`);
        try {
          checkMembershipSource(m.source);
        } catch (e) {
          throw fail(
            `body.mappings.${i}.source`,
            `must be a SCIM filter over the User schema: ${(e as Error).message}`,
          );
        }
      }
      const key = `${m.targetType}:${m.target}`;
      const prior = seen.get(key);
      if (prior !== undefined) throw fail(field, `${m.target} is already filled by mappings.${prior}`);
      seen.set(key, i);
      const out: FieldMapping = { source: m.source, targetType: m.targetType, target: m.target };
      if (m.required !== undefined) out.required = m.required;
      if (m.multiValued !== undefined) out.multiValued = m.multiValued;
      if (m.transform !== undefined) out.transform = m.transform;
      return out;
    });
  }
}
