/**
 * SCIM /Users (RFC 7644 §3; docs/scim.md, "Users"): the directory's users, one record. Every
 * write is one transaction: the row is locked, If-Match compared (412), the body checked
 * against the schema, uniqueness checked (409 uniqueness), the row and the mapped custom
 * claims written, the audit event recorded; then an `active` change goes through the admin
 * API's lifecycle service (disable: every session and token family ends at once), in its own
 * transaction as the admin API's disable is.
 */
import { newId } from '../../crypto.js';
import { isUniqueViolation, type Database, type Tx } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import { TenantRepository, TenantScope, type ScimUserRow, type ScimUserWrite } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import { ScimSettingsInput } from '../../schemas/scim.js';
import { parseInput } from '../../schemas/validate.js';
import { updateSettingsSection } from '../tenant-settings.js';
import type { CustomClaimsService } from '../custom-claims.js';
import type { FieldMappingServices } from '../federation/index.js';
import type { UserLifecycleService } from '../user-lifecycle.js';
import { invalidFilter, noSuchResource, scimError, uniqueness } from './errors.js';
import { indexedEq, matches, mentions } from './filter.js';
import { parseListQuery, scanPage, slicePage } from './list.js';
import { applyPatch } from './patch.js';
import { checkIfMatch, etagOf, listResponse, project, type ScimResource } from './render.js';
import { USER_TYPE } from './schema.js';
import { applyMembershipMappings } from './mapped-memberships.js';
import { applyMappings, refuseUnmapped, scimMapping, type ScimMapping } from './user-mapping.js';
import { userResource, userWrite } from './user-map.js';
import { checkBody } from './values.js';

/** What DELETE /Users/{id} does (tenant setting `scim_delete`, docs/scim.md). */
export type ScimDeleteMode = 'erase' | 'deactivate';
export const SCIM_SETTINGS_SECTION = 'scim';
export const DEFAULT_SCIM_DELETE: ScimDeleteMode = 'erase';

/** The filters answered from an index (docs/scim.md, "Filters"). */
export const USER_INDEXED = ['id', 'userName', 'externalId'];

export interface ScimUserDeps {
  lifecycle: UserLifecycleService;
  customClaims: CustomClaimsService;
  fieldMapping: FieldMappingServices;
}

/** A unique violation of users: the 409 names what the SCIM client can change. */
const taken = () => uniqueness('Another user of this tenant has this userName, externalId or email.');

export class ScimUserService {
  constructor(
    private readonly db: Database,
    private readonly deps: ScimUserDeps,
  ) {}

  async get(tenantId: string, id: string, base: string): Promise<ScimResource> {
    const row = await new TenantScope(this.db, tenantId).scimUsers.get(id);
    if (!row) throw noSuchResource('User', id);
    return userResource(row, base);
  }

  /** GET /Users and POST /Users/.search: a ListResponse (RFC 7644 §3.4.2). */
  async list(tenantId: string, query: Record<string, unknown>, base: string) {
    const q = parseListQuery(USER_TYPE, query);
    // A User is rendered without its readOnly `groups` (docs/scim.md, "Users"): a filter on it
    // would match nobody, silently. Membership is the indexed member filter of /Groups.
    if (q.filter && mentions(q.filter, 'groups'))
      throw invalidFilter('groups is not filterable on /Users: use GET /Groups?filter=members[value eq "<user id>"].');
    const users = new TenantScope(this.db, tenantId).scimUsers;
    let total: number;
    let page: ScimResource[];
    const hit = q.filter ? indexedEq(q.filter, USER_INDEXED) : undefined;
    if (hit && q.filter) {
      const rows =
        hit.attribute === 'id'
          ? [await users.get(hit.value)]
          : hit.attribute === 'userName'
            ? await users.byUserName(hit.value)
            : [await users.byExternalId(hit.value)];
      const found = rows.flatMap((r) => (r ? [userResource(r, base)] : [])).filter((r) => matches(q.filter!, r));
      total = found.length;
      page = found.slice(q.startIndex - 1, q.startIndex - 1 + q.count);
    } else if (!q.filter) {
      ({ total, page } = await slicePage(users, (row) => userResource(row, base), q));
    } else {
      ({ total, page } = await scanPage<ScimUserRow>(
        (after, limit) => users.page(after, limit),
        (row) => userResource(row, base),
        q,
      ));
    }
    return listResponse(
      page.map((r) => project(USER_TYPE, r, q.projection)),
      total,
      q.startIndex,
    );
  }

  /** POST /Users (RFC 7644 §3.3): 201 with the new user. */
  async create(tenantId: string, body: unknown, base: string, actor: Actor): Promise<ScimResource> {
    const mapping = await scimMapping(this.deps.fieldMapping, tenantId);
    const checked = checkBody(USER_TYPE, body);
    refuseUnmapped(mapping, checked.unknown);
    const { write, active } = userWrite(checked);
    const claims = applyMappings(mapping, { ...write.scim_attributes, userName: write.user_name }, write);
    await this.deps.customClaims.ensureSystemSchemas(tenantId);
    const id = newId('usr');
    await this.writeTx(tenantId, async (tx, scope) => {
      await this.checkUnique(scope, write, undefined);
      await scope.scimUsers.insert(id, write, Date.now());
      await this.storeClaims(scope, id, claims);
      const memberships = await this.applyMemberships(scope, id, mapping, base);
      await audit(tx, actor, {
        tenantId,
        action: 'user.create',
        targetType: 'user',
        targetId: id,
        summary: { via: 'scim', ...memberships },
      });
    });
    if (active === false) await this.deps.lifecycle.disable(tenantId, id, actor);
    return this.get(tenantId, id, base);
  }

  /** PUT /Users/{id} (RFC 7644 §3.5.1): replaces the user's SCIM attributes. */
  replace(tenantId: string, id: string, body: unknown, o: WriteOptions): Promise<ScimResource> {
    return this.update(tenantId, id, o, () => body);
  }

  /** PATCH /Users/{id} (RFC 7644 §3.5.2): the operations applied to the current representation. */
  patch(tenantId: string, id: string, body: unknown, o: WriteOptions): Promise<ScimResource> {
    return this.update(tenantId, id, o, (current) => applyPatch(USER_TYPE, current, body));
  }

  /** DELETE /Users/{id} (RFC 7644 §3.6): erasure, or a disable when the tenant says `deactivate`. */
  async delete(tenantId: string, id: string, o: WriteOptions): Promise<void> {
    const current = await this.get(tenantId, id, o.base);
    checkIfMatch(o.ifMatch, etagOf(current));
    const mode = (await this.settings(tenantId)).scim_delete;
    if (mode === 'deactivate') await this.deps.lifecycle.disable(tenantId, id, o.actor);
    else await this.deps.lifecycle.erase(tenantId, id, o.actor);
  }

  /** The tenant's SCIM settings (`settings.scim`). */
  async settings(tenantId: string): Promise<{ scim_delete: ScimDeleteMode }> {
    const doc = await new TenantRepository(this.db).settings(tenantId);
    if (doc === undefined) throw new ApiError(404, 'not_found', `Tenant ${tenantId} not found.`);
    const s = (doc?.[SCIM_SETTINGS_SECTION] ?? {}) as { delete?: unknown };
    return { scim_delete: s.delete === 'deactivate' || s.delete === 'erase' ? s.delete : DEFAULT_SCIM_DELETE };
  }

  /** PUT …/scim-settings: replaces `settings.scim` (audited as tenant.scim_settings.update). */
  async setSettings(tenantId: string, input: unknown, actor: Actor): Promise<{ scim_delete: ScimDeleteMode }> {
    const v = parseInput(ScimSettingsInput, input);
    const after = await updateSettingsSection(
      this.db,
      { tenantId, section: SCIM_SETTINGS_SECTION, action: 'tenant.scim_settings.update', actor },
      (doc) => ({ before: doc[SCIM_SETTINGS_SECTION] ?? null, after: { delete: v.scim_delete } }),
    );
    return { scim_delete: after.delete };
  }

  private async update(
    tenantId: string,
    id: string,
    o: WriteOptions,
    next: (current: ScimResource) => unknown,
  ): Promise<ScimResource> {
    const mapping = await scimMapping(this.deps.fieldMapping, tenantId);
    await this.deps.customClaims.ensureSystemSchemas(tenantId);
    let wasActive = true;
    let active: boolean | undefined;
    await this.writeTx(tenantId, async (tx, scope) => {
      const row = await scope.scimUsers.get(id, { forUpdate: true });
      if (!row) throw noSuchResource('User', id);
      const current = userResource(row, o.base);
      checkIfMatch(o.ifMatch, etagOf(current));
      wasActive = row.status === 'active';
      const checked = checkBody(USER_TYPE, next(current));
      refuseUnmapped(mapping, checked.unknown);
      const w = userWrite(checked);
      active = w.active;
      const claims = applyMappings(mapping, { ...w.write.scim_attributes, userName: w.write.user_name }, w.write);
      await this.checkUnique(scope, w.write, id);
      await scope.scimUsers.update(id, w.write, Date.now());
      await this.storeClaims(scope, id, claims);
      const memberships = await this.applyMemberships(scope, id, mapping, o.base);
      await audit(tx, o.actor, {
        tenantId,
        action: 'user.update',
        targetType: 'user',
        targetId: id,
        summary: { via: 'scim', ...memberships },
      });
    });
    // The admin API's moves: a disable ends every session and token family at once.
    if (active === false && wasActive) await this.deps.lifecycle.disable(tenantId, id, o.actor);
    if (active === true && !wasActive) await this.deps.lifecycle.enable(tenantId, id, o.actor);
    return this.get(tenantId, id, o.base);
  }

  private async writeTx(tenantId: string, fn: (tx: Tx, scope: TenantScope) => Promise<void>): Promise<void> {
    try {
      await this.db.transaction((tx) => fn(tx, new TenantScope(tx, tenantId)));
    } catch (e) {
      if (isUniqueViolation(e)) throw taken();
      throw e;
    }
  }

  /** 409 uniqueness before writing (RFC 7644 §3.3): userName (without case), externalId, the sign-in address. */
  private async checkUnique(scope: TenantScope, w: ScimUserWrite, self: string | undefined): Promise<void> {
    const other = (ids: (string | undefined)[]) => ids.some((x) => x !== undefined && x !== self);
    if (other((await scope.scimUsers.byUserName(w.user_name)).map((r) => r.id)))
      throw uniqueness(`Another user of this tenant has the userName ${w.user_name}.`);
    if (w.external_id !== null && other([(await scope.scimUsers.byExternalId(w.external_id))?.id]))
      throw uniqueness(`Another user of this tenant has the externalId ${w.external_id}.`);
    if (other(await scope.scimUsers.idsByEmail(w.email)))
      throw uniqueness('Another user of this tenant has this email as sign-in address.');
  }

  /** The groups and roles held by mapping, from the user as just written; the changes for the audit. */
  private async applyMemberships(scope: TenantScope, id: string, mapping: ScimMapping, base: string) {
    if (!mapping.memberships.length) return {};
    const row = await scope.scimUsers.get(id);
    const changes = await applyMembershipMappings(scope, id, userResource(row!, base), mapping.memberships, Date.now());
    return changes.added.length || changes.removed.length ? { memberships: changes } : {};
  }

  /** The mapped custom claims, merged (a claim the schema refuses is 400 invalidValue, nothing written). */
  private async storeClaims(scope: TenantScope, userId: string, claims: Record<string, unknown>): Promise<void> {
    if (!Object.keys(claims).length) return;
    try {
      await this.deps.customClaims.mergeUserClaims(scope, userId, claims);
    } catch (e) {
      if (e instanceof ApiError && e.status === 400) throw scimError(400, 'invalidValue', e.message);
      throw e;
    }
  }
}

export interface WriteOptions {
  base: string;
  actor: Actor;
  ifMatch?: string;
}
