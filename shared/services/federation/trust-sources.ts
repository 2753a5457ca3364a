/**
 * Federation trust sources (docs/federation.md): the operator's configuration of a SAML
 * metadata source (an aggregate such as eduGAIN's, one entity's metadata, or a federation),
 * and the state the metadata poller keeps on it.
 *
 * Operators create, read and update sources (API and `iam federation`). Only polling `mode`
 * and `intervalSeconds` of `protocolPayload.polling` are theirs; the poller's fields sent in a
 * body are ignored, and every update resets them (interface specification, "Federation trust
 * source"), because a changed URL, pinned certificate or policy makes the previous
 * validators, counters and observations meaningless. An update is conditional on
 * `expectedUpdatedAt`, the `updatedAt` the operator last read: a stale one is 409 with the
 * current value. Poller writes never change `updatedAt`.
 *
 * The poller lists due sources of every tenant (`due`, a named cross-tenant lookup returning
 * ids), claims one under a lease (`claim`), and writes its fields under that lease
 * (`recordPoll`).
 */
import { isUniqueViolation, type Database, type Tx } from '../../db/index.js';
import { newId } from '../../crypto.js';
import { ApiError, conflict, notFound } from '../../errors.js';
import { checkOutboundUrl, OutboundError } from '../../net/outbound.js';
import {
  FRESH_POLLER_FIELDS,
  OperationLookups,
  TenantRepository,
  TenantScope,
  type OperationRef,
  type PollerFields,
  type TrustSourceOperatorFields,
  type TrustSourceRow,
} from '../../repositories/index.js';
import {
  DEFAULT_INTERVAL_SECONDS,
  TrustSourceCreateInput,
  TrustSourceUpdateInput,
  type ProtocolPayloadInput,
  type RuntimeResolutionInput,
} from '../../schemas/federation.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import type { IdempotencyHandle } from '../idempotency.js';
import {
  DEFAULT_RESOLUTION,
  fail,
  pinCertificate,
  trustSourceView,
  urlMatchesPatterns,
  type StoredProtocolPayload,
  type StoredRuntimeResolution,
  type TrustSourceView,
} from './trust-source-view.js';

export {
  pinCertificate,
  trustSourceView,
  urlMatchesPatterns,
  type StoredProtocolPayload,
  type StoredRuntimeResolution,
  type TrustSourceView,
} from './trust-source-view.js';

export const TRUST_SOURCE_PREFIX = 'fts';
export const TRUST_SOURCES_DEFAULT_LIMIT = 100;
export const TRUST_SOURCES_MAX_LIMIT = 500;

/** Trust sources with automatic polling one tenant may have, unless configured otherwise. */
export const DEFAULT_MAX_AUTOMATIC_SOURCES = 20;

export class TrustSourceService {
  /**
   * @param opts.maxAutomaticSources sources with `polling.mode: automatic` per tenant
   *   (IAM_FEDERATION_MAX_AUTOMATIC_SOURCES): each one is a download and a signature pass the
   *   shared poller runs on the tenant's behalf, so one tenant cannot queue without bound.
   */
  constructor(
    private readonly db: Database,
    private readonly opts: { allowLoopback: boolean; maxAutomaticSources?: number },
  ) {}

  // ---- operator -----------------------------------------------------------------------------

  async list(tenantId: string, limit = TRUST_SOURCES_DEFAULT_LIMIT, offset = 0): Promise<TrustSourceView[]> {
    const n = Math.min(Math.max(limit, 1), TRUST_SOURCES_MAX_LIMIT);
    // A platform admin's `?tenant_id=` naming no tenant is 404, not an empty list of a tenant
    // that does not exist (as the token exchange and email settings answer).
    if (!(await new TenantRepository(this.db).lifecycle(tenantId))) throw notFound(`Tenant ${tenantId}`);
    const rows = await new TenantScope(this.db, tenantId).trustSources.list(n, Math.max(offset, 0));
    return rows.map(trustSourceView);
  }

  /** By id (`fts_…`) or by sourceKey. */
  async get(tenantId: string, idOrKey: string): Promise<TrustSourceView> {
    return trustSourceView(await this.row(tenantId, idOrKey));
  }

  async create(tenantId: string, raw: unknown, actor: Actor): Promise<TrustSourceView> {
    const input = parseInput(TrustSourceCreateInput, raw, 'body');
    const payload = this.payloadFrom(input.protocolPayload, undefined);
    const certificates = (input.certificates ?? []).map((c, i) =>
      pinCertificate(typeof c === 'string' ? c : c.pem, `body.certificates.${i}`),
    );
    const fields: TrustSourceOperatorFields = {
      source_type: input.sourceType,
      source_key: input.sourceKey,
      display_name: input.displayName,
      lifecycle_state: input.lifecycleState ?? 'active',
      ...this.payloadColumns(payload),
      certificates,
    };
    const id = newId(TRUST_SOURCE_PREFIX);
    try {
      return await this.db.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId);
        await this.checkMappingSets(scope, payload.runtimeResolution);
        if (fields.polling_mode === 'automatic') await this.checkAutomaticCap(scope);
        const now = Date.now();
        await scope.trustSources.insert(id, fields, this.firstRefresh(fields, now), now);
        await audit(tx, actor, {
          tenantId,
          action: 'federation_trust_source.create',
          targetType: 'federation_trust_source',
          targetId: id,
          summary: { sourceKey: fields.source_key, sourceType: fields.source_type, metadataUrl: payload.metadataUrl },
        });
        return trustSourceView((await scope.trustSources.get(id))!);
      });
    } catch (e) {
      if (isUniqueViolation(e))
        throw conflict(`A federation trust source with sourceKey ${input.sourceKey} exists in this tenant.`, {
          field: 'sourceKey',
        });
      throw e;
    }
  }

  /**
   * PUT: the fields given replace the stored ones (protocolPayload as a whole, its omitted
   * members taking their defaults), conditional on expectedUpdatedAt; the poller's fields are
   * reset. The change, its audit event and the Idempotency-Key answer commit together.
   */
  async update(
    tenantId: string,
    idOrKey: string,
    raw: unknown,
    actor: Actor,
    idempotency?: IdempotencyHandle,
  ): Promise<{ result: TrustSourceView }> {
    const input = parseInput(TrustSourceUpdateInput, raw, 'body');
    const certificates = input.certificates?.map((c, i) =>
      pinCertificate(typeof c === 'string' ? c : c.pem, `body.certificates.${i}`),
    );
    try {
      return await this.db.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId);
        const before = await this.row(tenantId, idOrKey, tx);
        if (before.updated_at !== input.expectedUpdatedAt) throw this.stale(before);
        const payload = this.payloadFrom(
          input.protocolPayload,
          input.protocolPayload === undefined
            ? (before.protocol_payload as unknown as StoredProtocolPayload)
            : undefined,
        );
        await this.checkMappingSets(scope, payload.runtimeResolution);
        const fields: TrustSourceOperatorFields = {
          source_type: input.sourceType ?? before.source_type,
          source_key: input.sourceKey ?? before.source_key,
          display_name: input.displayName ?? before.display_name,
          lifecycle_state: input.lifecycleState ?? before.lifecycle_state,
          ...this.payloadColumns(payload),
          certificates: certificates ?? before.certificates,
        };
        // Only a source turning automatic counts: one that already is stays editable even
        // when the operator lowered the cap below the tenant's count since.
        if (fields.polling_mode === 'automatic' && before.polling_mode !== 'automatic')
          await this.checkAutomaticCap(scope, before.id);
        // Strictly after the stored revision, so two updates in one millisecond still differ.
        const now = Math.max(Date.now(), before.updated_at + 1);
        const changed = await scope.trustSources.update(
          before.id,
          fields,
          input.expectedUpdatedAt,
          this.firstRefresh(fields, now),
          now,
        );
        if (changed === 0) throw this.stale((await scope.trustSources.get(before.id)) ?? before);
        await audit(tx, actor, {
          tenantId,
          action: 'federation_trust_source.update',
          targetType: 'federation_trust_source',
          targetId: before.id,
          summary: {
            changed: Object.keys(input).filter((k) => k !== 'expectedUpdatedAt'),
            sourceKey: fields.source_key,
            pollerStateReset: true,
          },
        });
        const out = { result: trustSourceView((await scope.trustSources.get(before.id))!) };
        await idempotency?.complete(tx, 200, out);
        return out;
      });
    } catch (e) {
      if (isUniqueViolation(e))
        throw conflict(`A federation trust source with sourceKey ${input.sourceKey} exists in this tenant.`, {
          field: 'sourceKey',
        });
      throw e;
    }
  }

  // ---- the metadata poller ------------------------------------------------------------------

  /** Sources of every tenant whose automatic polling is due and unleased (ids only). */
  due(now: number, limit: number): Promise<OperationRef[]> {
    return new OperationLookups(this.db).dueTrustSources(now, limit);
  }

  /** The stored row (poller columns and lease included), by id or sourceKey. */
  async row(tenantId: string, idOrKey: string, db: Database | Tx = this.db): Promise<TrustSourceRow> {
    const repo = new TenantScope(db, tenantId).trustSources;
    const r = idOrKey.startsWith(`${TRUST_SOURCE_PREFIX}_`) ? await repo.get(idOrKey) : await repo.byKey(idOrKey);
    if (!r) throw notFound(`Federation trust source ${idOrKey}`);
    return r;
  }

  /** Every source of a tenant as stored (runtime resolution's candidates). */
  rows(tenantId: string): Promise<TrustSourceRow[]> {
    return new TenantScope(this.db, tenantId).trustSources.listAll();
  }

  /** Claims a source for one poll (one winner); `force` claims it even when it is not due. */
  async claim(tenantId: string, id: string, holder: string, leaseMs: number, force = false): Promise<boolean> {
    const now = Date.now();
    return (await new TenantScope(this.db, tenantId).trustSources.claim(id, holder, now + leaseMs, now, force)) > 0;
  }

  async renewLease(tenantId: string, id: string, holder: string, leaseMs: number): Promise<boolean> {
    return (await new TenantScope(this.db, tenantId).trustSources.renew(id, holder, Date.now() + leaseMs)) > 0;
  }

  /**
   * Writes the poller's fields under its lease (and releases it when `release`). False when
   * the lease was lost, e.g. to an operator update that reset the source meanwhile.
   */
  async recordPoll(
    tenantId: string,
    id: string,
    holder: string,
    fields: Partial<PollerFields>,
    release = true,
    db: Database | Tx = this.db,
  ): Promise<boolean> {
    return (await new TenantScope(db, tenantId).trustSources.writePollerFields(id, holder, fields, release)) > 0;
  }

  // ---- validation ---------------------------------------------------------------------------

  private stale(current: TrustSourceRow): ApiError {
    return new ApiError(
      409,
      'conflict',
      `expectedUpdatedAt is stale: the source was changed since (its updatedAt is now ${current.updated_at}); ` +
        'read it again and retry.',
      { field: 'expectedUpdatedAt', currentUpdatedAt: current.updated_at },
    );
  }

  /** The stored payload from the input (with defaults), or the previous one when none was given. */
  private payloadFrom(
    input: ProtocolPayloadInput | undefined,
    previous: StoredProtocolPayload | undefined,
  ): StoredProtocolPayload {
    if (!input && previous) return previous;
    const p = input ?? {};
    const polling = {
      mode: p.polling?.mode ?? 'automatic',
      intervalSeconds: p.polling?.intervalSeconds ?? DEFAULT_INTERVAL_SECONDS,
    };
    const patterns = p.metadataUrlPatterns ?? [];
    patterns.forEach((pat, i) => {
      const field = `body.protocolPayload.metadataUrlPatterns.${i}`;
      if (!/^https:\/\/[^*/?#]*[^/?#]*\//.test(pat) && !/^https:\/\/[^/?#]+$/.test(pat))
        throw fail(field, 'must be an https URL pattern with the host written out, e.g. https://mds.example.org/*.xml');
      if (/^https:\/\/\*/.test(pat)) throw fail(field, 'must not start its host with a wildcard');
    });
    const url = p.metadataUrl ?? null;
    if (url !== null) {
      const field = 'body.protocolPayload.metadataUrl';
      try {
        checkOutboundUrl(url, this.opts);
      } catch (e) {
        if (e instanceof OutboundError) throw fail(field, `must be an https URL the service may fetch: ${e.message}`);
        throw e;
      }
      if (patterns.length && !urlMatchesPatterns(url, patterns))
        throw fail(field, 'does not match any of protocolPayload.metadataUrlPatterns');
    }
    if (polling.mode === 'automatic' && url === null)
      throw fail('body.protocolPayload.metadataUrl', 'is required when polling.mode is automatic');
    return {
      description: p.description ?? null,
      metadataUrl: url,
      metadataUrlPatterns: patterns,
      policy: p.policy ?? 'strict',
      polling,
      runtimeResolution: this.resolutionFrom(p.runtimeResolution),
    };
  }

  private resolutionFrom(r: RuntimeResolutionInput | undefined): StoredRuntimeResolution {
    if (!r) return { ...DEFAULT_RESOLUTION };
    const field = 'body.protocolPayload.runtimeResolution';
    if (r.mode === 'automatic') {
      if (r.roles.length === 0) throw fail(`${field}.roles`, 'must name at least one role when mode is automatic');
      if (r.roles.includes('saml_idp') && !r.idpFieldMappingSetId)
        throw fail(`${field}.idpFieldMappingSetId`, 'is required when automatic resolution includes saml_idp');
      if (r.roles.includes('saml_sp') && !r.spFieldMappingSetId)
        throw fail(`${field}.spFieldMappingSetId`, 'is required when automatic resolution includes saml_sp');
    }
    const out: StoredRuntimeResolution = { mode: r.mode, roles: [...r.roles], priority: r.priority };
    if (r.idpFieldMappingSetId) out.idpFieldMappingSetId = r.idpFieldMappingSetId;
    if (r.spFieldMappingSetId) out.spFieldMappingSetId = r.spFieldMappingSetId;
    if (r.defaultAttributePresetId) out.defaultAttributePresetId = r.defaultAttributePresetId;
    if (r.registrationAuthorities) out.registrationAuthorities = [...r.registrationAuthorities];
    if (r.entityCategoryPolicy)
      out.entityCategoryPolicy = {
        defaultDecision: r.entityCategoryPolicy.defaultDecision,
        rules: r.entityCategoryPolicy.rules.map((x) => ({
          entityCategory: x.entityCategory,
          decision: x.decision,
          ...(x.attributePresetId ? { attributePresetId: x.attributePresetId } : {}),
        })),
      };
    return out;
  }

  /**
   * 409 `automatic_polling_limit` naming `body.protocolPayload.polling.mode` when the tenant
   * already has the most automatic sources it may have (docs/federation.md, "Polling").
   */
  private async checkAutomaticCap(scope: TenantScope, exceptId?: string): Promise<void> {
    const max = this.opts.maxAutomaticSources ?? DEFAULT_MAX_AUTOMATIC_SOURCES;
    if ((await scope.trustSources.countAutomatic(exceptId)) < max) return;
    const field = 'body.protocolPayload.polling.mode';
    throw new ApiError(
      409,
      'automatic_polling_limit',
      `${field}: a tenant may have at most ${max} trust sources with automatic polling ` +
        '(IAM_FEDERATION_MAX_AUTOMATIC_SOURCES); use manual polling or remove another source from automatic polling.',
      { field, limit: max, details: [{ field, message: `at most ${max} automatic sources per tenant` }] },
    );
  }

  /** The named field-mapping sets must exist in the tenant (400 naming the field otherwise). */
  private async checkMappingSets(scope: TenantScope, r: StoredRuntimeResolution): Promise<void> {
    for (const key of ['idpFieldMappingSetId', 'spFieldMappingSetId'] as const) {
      const id = r[key];
      if (id && !(await scope.fieldMappingSets.get(id)))
        throw fail(
          `body.protocolPayload.runtimeResolution.${key}`,
          `names no field-mapping set of this tenant (${id})`,
        );
    }
  }

  private payloadColumns(
    p: StoredProtocolPayload,
  ): Pick<
    TrustSourceOperatorFields,
    'protocol_payload' | 'polling_mode' | 'interval_seconds' | 'idp_mapping_set_id' | 'sp_mapping_set_id'
  > {
    return {
      protocol_payload: p as unknown as Record<string, unknown>,
      polling_mode: p.polling.mode,
      interval_seconds: p.polling.intervalSeconds,
      idp_mapping_set_id: p.runtimeResolution.idpFieldMappingSetId ?? null,
      sp_mapping_set_id: p.runtimeResolution.spFieldMappingSetId ?? null,
    };
  }

  /** An automatic, active source is due at once after create or update; otherwise never by itself. */
  private firstRefresh(f: TrustSourceOperatorFields, now: number): number | null {
    return f.polling_mode === 'automatic' && f.lifecycle_state === 'active' ? now : null;
  }
}

export { FRESH_POLLER_FIELDS };
