/**
 * Source profiles (docs/federation.md, "Source profiles"): the shape of an identity source a
 * tenant imports from or federates with (a CSV export, a SCIM service, SAML attributes, a
 * directory), with versions of its schema. A version's `schemaHash` is the SHA-256 (hex) of
 * the RFC 8785 canonical JSON of its `schema`, so the same schema hashes the same whatever
 * its key order or number spelling, and a mapping set can tell that the schema it was written
 * for has changed.
 */
import { createHash } from 'node:crypto';
import { isUniqueViolation, type Database } from '../../db/index.js';
import { newId } from '../../crypto.js';
import { badRequest, conflict, notFound } from '../../errors.js';
import {
  TenantRepository,
  TenantScope,
  type SourceProfileRow,
  type SourceProfileVersionRow,
} from '../../repositories/index.js';
import { SourceProfileCreateInput, SourceProfileVersionInput } from '../../schemas/federation.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import type { IdempotencyHandle } from '../idempotency.js';
import { canonicalize, CanonicalizationError } from './jcs.js';

export const SOURCE_PROFILES_DEFAULT_LIMIT = 100;
export const SOURCE_PROFILES_MAX_LIMIT = 500;

/** SHA-256 (lowercase hex) of the RFC 8785 canonical form of `schema`. */
export function schemaHash(schema: unknown): string {
  return createHash('sha256').update(canonicalize(schema), 'utf8').digest('hex');
}

export interface SourceProfileVersionView {
  id: string;
  versionLabel: string;
  lifecycleState: string;
  schemaHash: string;
  schema: Record<string, unknown>;
  warningSummary: Record<string, unknown>;
  parserOptions: Record<string, unknown>;
  sourceMetadata: Record<string, unknown>;
  parseDraftId: string | null;
  createdAt: number;
}

/** The interface specification's "Source profile result". */
export interface SourceProfileResult {
  id: string;
  tenantId: string;
  profileKey: string;
  displayName: string;
  lifecycleState: string;
  sourceType: string;
  activeVersionId: string | null;
  version?: SourceProfileVersionView;
  createdAt: number;
  updatedAt: number;
}

export function versionView(v: SourceProfileVersionRow): SourceProfileVersionView {
  return {
    id: v.id,
    versionLabel: v.version_label,
    lifecycleState: v.lifecycle_state,
    schemaHash: v.schema_hash,
    schema: v.schema_json,
    warningSummary: v.warning_summary ?? {},
    parserOptions: v.parser_options ?? {},
    sourceMetadata: v.source_metadata ?? {},
    parseDraftId: v.parse_draft_id,
    createdAt: v.created_at,
  };
}

function profileView(p: SourceProfileRow, version: SourceProfileVersionRow | undefined): SourceProfileResult {
  const out: SourceProfileResult = {
    id: p.id,
    tenantId: p.tenant_id,
    profileKey: p.profile_key,
    displayName: p.display_name,
    lifecycleState: p.lifecycle_state,
    sourceType: p.source_type,
    activeVersionId: p.active_version_id,
    createdAt: p.created_at,
    updatedAt: p.updated_at,
  };
  if (version) out.version = versionView(version);
  return out;
}

function hashOf(schema: Record<string, unknown>): string {
  try {
    return schemaHash(schema);
  } catch (e) {
    if (e instanceof CanonicalizationError)
      throw badRequest(`body.schema: ${e.message}`, [{ field: 'body.schema', message: e.message }]);
    throw e;
  }
}

interface VersionFields {
  versionLabel?: string;
  parseDraftId?: string;
  schema?: Record<string, unknown>;
  parserOptions?: Record<string, unknown>;
  warningSummary?: Record<string, unknown>;
  sourceMetadata?: Record<string, unknown>;
}

export class SourceProfileService {
  constructor(private readonly db: Database) {}

  /**
   * Creates a profile, and its first version (made active) when the body carries a schema or
   * a versionLabel. profileKey is unique per tenant (409). With an Idempotency-Key the answer
   * is recorded in the same transaction, so a replay returns this very result.
   */
  async create(
    tenantId: string,
    raw: unknown,
    actor: Actor,
    idempotency?: IdempotencyHandle,
  ): Promise<{ result: SourceProfileResult }> {
    const input = parseInput(SourceProfileCreateInput, raw, 'body');
    const withVersion = input.schema !== undefined || input.versionLabel !== undefined;
    const hash = withVersion ? hashOf(input.schema ?? {}) : undefined;
    try {
      return await this.db.transaction(async (tx) => {
        // A platform admin's `?tenant_id=` may name no tenant: 404, not the foreign key's 500.
        if (!(await new TenantRepository(tx).lifecycle(tenantId))) throw notFound(`Tenant ${tenantId}`);
        const scope = new TenantScope(tx, tenantId).sourceProfiles;
        const now = Date.now();
        const profile: SourceProfileRow = {
          id: newId('spr'),
          tenant_id: tenantId,
          profile_key: input.profileKey,
          display_name: input.displayName,
          source_type: input.sourceType,
          lifecycle_state: 'active',
          active_version_id: null,
          created_at: now,
          updated_at: now,
        };
        await scope.insert(profile);
        let version: SourceProfileVersionRow | undefined;
        if (withVersion) {
          version = this.versionRow(profile.id, input, hash!, now);
          await scope.insertVersion(version);
          await scope.setActiveVersion(profile.id, version.id, now);
          profile.active_version_id = version.id;
        }
        await audit(tx, actor, {
          tenantId,
          action: 'source_profile.create',
          targetType: 'source_profile',
          targetId: profile.id,
          summary: { profileKey: profile.profile_key, sourceType: profile.source_type, schemaHash: hash ?? null },
        });
        const out = { result: profileView(profile, version) };
        await idempotency?.complete(tx, 201, out);
        return out;
      });
    } catch (e) {
      if (isUniqueViolation(e))
        throw conflict(`A source profile with profileKey ${input.profileKey} exists in this tenant.`, {
          field: 'profileKey',
        });
      throw e;
    }
  }

  /** A new version of a profile's schema; it becomes the active one. versionLabel is unique per profile. */
  async addVersion(
    tenantId: string,
    idOrKey: string,
    raw: unknown,
    actor: Actor,
  ): Promise<{ result: SourceProfileResult }> {
    const input = parseInput(SourceProfileVersionInput, raw, 'body');
    const hash = hashOf(input.schema);
    try {
      return await this.db.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId).sourceProfiles;
        const profile = await this.profileRow(scope, idOrKey);
        const now = Math.max(Date.now(), profile.updated_at + 1);
        const version = this.versionRow(profile.id, input, hash, now);
        await scope.insertVersion(version);
        await scope.setActiveVersion(profile.id, version.id, now);
        await audit(tx, actor, {
          tenantId,
          action: 'source_profile.version.create',
          targetType: 'source_profile',
          targetId: profile.id,
          summary: { versionId: version.id, versionLabel: version.version_label, schemaHash: hash },
        });
        return {
          result: profileView({ ...profile, active_version_id: version.id, updated_at: now }, version),
        };
      });
    } catch (e) {
      if (isUniqueViolation(e))
        throw conflict(`This source profile already has a version labelled ${input.versionLabel}.`, {
          field: 'versionLabel',
        });
      throw e;
    }
  }

  async list(tenantId: string, limit = SOURCE_PROFILES_DEFAULT_LIMIT, offset = 0): Promise<SourceProfileResult[]> {
    const scope = new TenantScope(this.db, tenantId).sourceProfiles;
    const n = Math.min(Math.max(limit, 1), SOURCE_PROFILES_MAX_LIMIT);
    const rows = await scope.list(n, Math.max(offset, 0));
    const out: SourceProfileResult[] = [];
    for (const p of rows)
      out.push(profileView(p, p.active_version_id ? await scope.version(p.active_version_id) : undefined));
    return out;
  }

  /** By id (`spr_…`) or profileKey, with its active version. */
  async get(tenantId: string, idOrKey: string): Promise<SourceProfileResult> {
    const scope = new TenantScope(this.db, tenantId).sourceProfiles;
    const p = await this.profileRow(scope, idOrKey);
    return profileView(p, p.active_version_id ? await scope.version(p.active_version_id) : undefined);
  }

  async versions(tenantId: string, idOrKey: string): Promise<SourceProfileVersionView[]> {
    const scope = new TenantScope(this.db, tenantId).sourceProfiles;
    const p = await this.profileRow(scope, idOrKey);
    return (await scope.versions(p.id)).map(versionView);
  }

  private async profileRow(scope: TenantScope['sourceProfiles'], idOrKey: string): Promise<SourceProfileRow> {
    const p = idOrKey.startsWith('spr_') ? await scope.get(idOrKey) : await scope.byKey(idOrKey);
    if (!p) throw notFound(`Source profile ${idOrKey}`);
    return p;
  }

  private versionRow(profileId: string, v: VersionFields, hash: string, now: number): SourceProfileVersionRow {
    return {
      id: newId('spv'),
      profile_id: profileId,
      version_label: v.versionLabel ?? 'v1',
      lifecycle_state: 'active',
      schema_hash: hash,
      schema_json: v.schema ?? {},
      parser_options: v.parserOptions ?? null,
      warning_summary: v.warningSummary ?? {},
      source_metadata: v.sourceMetadata ?? null,
      parse_draft_id: v.parseDraftId ?? null,
      created_at: now,
    };
  }
}
