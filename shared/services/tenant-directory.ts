/**
 * The directory's tenants (docs/directory.md, "Tenants"): the filtered keyset list, one tenant
 * with its counts, the PATCH of its name and sign-up setting under a strong ETag, the
 * offboarding export, and (tenant-offboarding.ts) offboard, restore and the purge.
 */
import type { Tenant } from '../db/entities.js';
import type { Database } from '../db/index.js';
import { CursorSigner } from '../cursor.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { TenantDirectoryRows, TenantScope } from '../repositories/index.js';
import type { PatchTenantInput, TenantListQuery } from '../schemas/tenants.js';
import { ifMatchSatisfied } from './agents/terms.js';
import { audit, type Actor } from './audit.js';
import { toClientView, toUserView } from './directory.js';
import { TenantOffboarding, type OffboardRequest, type PurgeReport } from './tenant-offboarding.js';

/** A tenant as the directory's routes show one. */
export interface TenantListed {
  id: string;
  name: string;
  lifecycle_state: string;
  allow_signup: boolean;
  created_at: number;
  updated_at: number;
  purge_after: number | null;
}

export const toTenantListed = (t: Tenant): TenantListed => ({
  id: t.id,
  name: t.name,
  lifecycle_state: t.lifecycle_state,
  allow_signup: t.settings?.allowSignup === true,
  created_at: t.created_at,
  updated_at: t.updated_at,
  purge_after: t.purge_after ?? null,
});

/**
 * The tenant's strong entity tag (RFC 9110 §8.8.3): its `updated_at`, which every change of
 * the row raises (a PATCH writes at least the previous value + 1).
 */
export const tenantEtag = (t: Pick<Tenant, 'updated_at'>): string => `"t${t.updated_at}"`;

/** The states a PATCH applies to: not an offboarded, purged or recovering tenant. */
const EDITABLE = ['provisioning', 'active', 'suspended'] as const;

/** Rows read per statement while building an export. */
const EXPORT_PAGE = 1000;

export class TenantDirectoryService {
  private readonly cursors: CursorSigner;
  private readonly offboarding: TenantOffboarding;

  constructor(
    private readonly ds: Database,
    secretKey: string,
    opts: { purgeGraceSeconds: number },
  ) {
    this.cursors = new CursorSigner(secretKey, 'tenants');
    this.offboarding = new TenantOffboarding(ds, opts.purgeGraceSeconds);
  }

  private async require(id: string): Promise<Tenant> {
    const t = await new TenantDirectoryRows(this.ds).get(id);
    if (!t) throw notFound(`Tenant ${id}`);
    return t;
  }

  /**
   * One page of tenants, oldest first. `own`: a tenant admin's own tenant id (the list is that
   * tenant, if it passes the filters); null for a platform admin (every tenant).
   */
  async list(q: TenantListQuery, own: string | null): Promise<{ tenants: TenantListed[]; next_cursor: string | null }> {
    if (q.cursor !== undefined && q.offset !== undefined) {
      throw badRequest('query.cursor and query.offset cannot be used together.', [
        { field: 'query.offset', message: 'not with query.cursor' },
      ]);
    }
    const limit = q.limit ?? 100;
    if (own !== null) {
      const t = await this.require(own);
      const passes =
        (!q.lifecycle_state || q.lifecycle_state.includes(t.lifecycle_state)) &&
        (!q.name_prefix || t.name.startsWith(q.name_prefix));
      return { tenants: passes && !q.cursor && !q.offset ? [toTenantListed(t)] : [], next_cursor: null };
    }
    const rows = await new TenantDirectoryRows(this.ds).page({
      states: q.lifecycle_state,
      namePrefix: q.name_prefix,
      after: q.cursor === undefined ? undefined : this.cursors.decode(q.cursor),
      offset: q.offset,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      tenants: page.map(toTenantListed),
      next_cursor: rows.length > limit && last ? this.cursors.encode(last.created_at, last.id) : null,
    };
  }

  /** The tenant, its counts and its ETag; 404 when there is no such tenant. */
  async get(id: string) {
    const t = await this.require(id);
    const counts = await new TenantScope(this.ds, id).tenantData.counts(Date.now());
    return { tenant: { ...toTenantListed(t), counts }, etag: tenantEtag(t) };
  }

  /**
   * Changes the name and/or `allow_signup`. `ifMatch`, when sent, must match the current ETag
   * (412 otherwise, RFC 9110 §13.1.1); the write is conditional on the `updated_at` read, so a
   * concurrent change between the read and the write is a 412 too. Audited `tenant.update`.
   */
  async update(id: string, patch: PatchTenantInput, actor: Actor, opts: { ifMatch?: string } = {}) {
    return this.ds.transaction(async (tx) => {
      const rows = new TenantDirectoryRows(tx);
      const t = await rows.get(id);
      if (!t) throw notFound(`Tenant ${id}`);
      const stale = () =>
        new ApiError(412, 'precondition_failed', "If-Match does not match the tenant's current ETag; read it again.", {
          etag: tenantEtag(t),
        });
      // RFC 9110 §13.2.1: the precondition is evaluated before the change is considered.
      if (opts.ifMatch !== undefined && !ifMatchSatisfied(opts.ifMatch, tenantEtag(t))) throw stale();
      if (!(EDITABLE as readonly string[]).includes(t.lifecycle_state)) {
        throw new ApiError(409, 'tenant_not_editable', `A ${t.lifecycle_state} tenant cannot be changed.`, {
          lifecycle_state: t.lifecycle_state,
        });
      }
      const name = patch.name ?? t.name;
      const allowSignup = patch.allow_signup ?? t.settings?.allowSignup === true;
      const settings = { ...(t.settings ?? {}), allowSignup };
      const now = Math.max(Date.now(), t.updated_at + 1);
      const written = await rows.update(id, { name, settings, expectedUpdatedAt: t.updated_at, now, states: EDITABLE });
      if (written !== 1) throw stale();
      await audit(tx, actor, {
        tenantId: id,
        action: 'tenant.update',
        targetType: 'tenant',
        targetId: id,
        summary: {
          before: { name: t.name, allow_signup: t.settings?.allowSignup === true },
          after: { name, allow_signup: allowSignup },
          request_id: actor.requestId ?? null,
        },
      });
      const after = (await rows.get(id))!;
      return { tenant: toTenantListed(after), etag: tenantEtag(after) };
    });
  }

  offboard(id: string, req: OffboardRequest, actor: Actor): Promise<TenantListed> {
    return this.offboarding.offboard(id, req, actor).then(toTenantListed);
  }

  restore(id: string, actor: Actor): Promise<TenantListed> {
    return this.offboarding.restore(id, actor).then(toTenantListed);
  }

  /** The purge job's run (tenant-offboarding.ts). */
  purgeDue(opts: { signal?: AbortSignal; maxBatches?: number; batchRows?: number } = {}): Promise<PurgeReport> {
    return this.offboarding.purgeDue(opts);
  }

  /**
   * The tenant's directory as one JSON document (docs/tenant-lifecycle.md, "The export"): the
   * tenant, its users (with their standard claims), clients, custom claim schemas and upstream
   * identity providers, without any secret (no client secret hash, no sealed upstream secret).
   * A `purging` or `deleted` tenant has nothing left to export: 409 `tenant_purged`.
   * Audited `tenant.export`.
   */
  async export(id: string, actor: Actor) {
    const t = await this.require(id);
    if (t.lifecycle_state === 'purging' || t.lifecycle_state === 'deleted') {
      throw new ApiError(409, 'tenant_purged', `The tenant is ${t.lifecycle_state}: nothing is left to export.`, {
        lifecycle_state: t.lifecycle_state,
      });
    }
    const scope = new TenantScope(this.ds, id);
    const users = [];
    for (let offset = 0; ; offset += EXPORT_PAGE) {
      const page = await scope.users.list({ limit: EXPORT_PAGE, offset });
      users.push(...page.map(toUserView));
      if (page.length < EXPORT_PAGE) break;
    }
    const clients = [];
    for (let offset = 0; ; offset += EXPORT_PAGE) {
      const page = await scope.clients.list({ limit: EXPORT_PAGE, offset });
      clients.push(...page.map(toClientView));
      if (page.length < EXPORT_PAGE) break;
    }
    const claimSchemas = await scope.customClaims.listSchemas();
    const upstream = (await scope.upstreamIdps.list()).map(
      ({ client_secret_sealed: _s, secret_key_id: _k, ...rest }) => rest,
    );
    await this.ds.transaction((tx) =>
      audit(tx, actor, {
        tenantId: id,
        action: 'tenant.export',
        targetType: 'tenant',
        targetId: id,
        summary: {
          users: users.length,
          clients: clients.length,
          claim_schemas: claimSchemas.length,
          upstream_idps: upstream.length,
          request_id: actor.requestId ?? null,
        },
      }),
    );
    return {
      format: 'iam.tenant-export.v1' as const,
      exported_at: Date.now(),
      tenant: toTenantListed(t),
      users,
      clients,
      claim_schemas: claimSchemas,
      upstream_idps: upstream,
    };
  }
}
