/**
 * Groups and their members (docs/rbac.md), for the admin API, `iam groups …` and SCIM
 * /Groups (docs/scim.md): one record per group, whichever surface made it.
 *
 * - Names are unique per tenant without regard to case (`display_name_key`, the lower-cased
 *   name, under a unique index): a taken name is 409 `conflict` naming `display_name`.
 * - Every write bumps `version` in its transaction, with its audit event naming the actor. The
 *   admin API's ETag is the strong `"<version>"`, SCIM's the weak `W/"<version>"` (RFC 7644
 *   §3.14); an If-Match is compared with the row locked, before anything is written.
 * - Member changes are single-row INSERTs and DELETEs (shared/repositories/groups.ts), never a
 *   rewrite of the list, so concurrent changes of one group's members keep each other's rows.
 * - A delete is refused (409 `group_in_use`) while a SCIM field-mapping set names the group;
 *   otherwise the members, the group's role assignments and the group go in one transaction.
 * - Removing a member revokes nothing already issued unless the caller asks (`revoke_tokens`):
 *   then the user is signed out everywhere, as the admin API's sign-out does (sessions and token
 *   families end), and the next token gets the reduced permissions.
 */
import { newId } from '../../crypto.js';
import { CursorSigner } from '../../cursor.js';
import { isUniqueViolation, type Database, type Tx } from '../../db/index.js';
import { ApiError, conflict, notFound } from '../../errors.js';
import { TenantRepository, TenantScope, type GroupRow } from '../../repositories/index.js';
import {
  AddMembersInput,
  CreateGroupInput,
  GROUP_MEMBERS_PER_CALL,
  GROUP_PAGE_DEFAULT,
  GroupListQuery,
  MemberListQuery,
  PatchGroupInput,
  type GroupPage,
  type GroupView,
  type MemberPage,
} from '../../schemas/groups.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import { ScimGroups } from '../scim/groups.js';

export const GROUP_ID_PREFIX = 'grp';

/** What the service needs of others: the mapping sets naming a group, and a user's sign-out. */
export interface GroupServiceDeps {
  mappingSets: { naming(tenantId: string, type: 'group', name: string): Promise<{ id: string; setKey: string }[]> };
  userLifecycle: { signOut(tenantId: string, userId: string, actor: Actor): Promise<{ families_revoked: number }> };
}

/** A change of one group: fields, then members added and removed, or the whole member set replaced. */
export interface GroupChange {
  display_name?: string;
  description?: string | null;
  external_id?: string | null;
  add?: string[];
  remove?: string[];
  /** PUT semantics: the members become exactly these (the difference is inserted and deleted). */
  replaceMembers?: string[];
}

/** How an If-Match is compared: `strong` (admin API, RFC 9110 §13.1.1) or `weak` (SCIM, RFC 7644 §3.14). */
export interface Precondition {
  ifMatch?: string;
  weak?: boolean;
}

export const groupEtag = (version: number, weak = false): string => `${weak ? 'W/' : ''}"${version}"`;

/** Whether an If-Match header names the version (`*` names any). */
export function ifMatchesVersion(header: string, version: number, weak: boolean): boolean {
  const h = header.trim();
  if (h === '*') return true;
  const tags = h.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags.some((t) => (weak ? t.replace(/^W\//, '') : t) === `"${version}"`);
}

export const nameKey = (name: string): string => name.toLowerCase();

const preconditionFailed = () =>
  new ApiError(412, 'precondition_failed', "If-Match does not match the group's current ETag; read the group again.");

const groupNotFound = (groupId: string) => notFound(`Group ${groupId}`);

const listItem = (tenantId: string, g: GroupRow): Omit<GroupView, 'member_count'> => ({
  id: g.id,
  tenant_id: tenantId,
  display_name: g.display_name,
  description: g.description,
  external_id: g.external_id,
  version: g.version,
  created_at: g.created_at,
  updated_at: g.updated_at,
});

export class GroupService {
  private readonly cursors: CursorSigner;
  private readonly memberCursors: CursorSigner;

  constructor(
    private readonly db: Database,
    secretKey: string,
    private readonly deps: GroupServiceDeps,
  ) {
    this.cursors = new CursorSigner(secretKey, 'groups');
    this.memberCursors = new CursorSigner(secretKey, 'group-members');
  }

  #scim?: ScimGroups;

  /** SCIM /Groups over the same records (shared/services/scim/groups.ts). */
  get scim(): ScimGroups {
    return (this.#scim ??= new ScimGroups(this.db, this));
  }

  async requireTenant(tenantId: string): Promise<void> {
    if (!(await new TenantRepository(this.db).get(tenantId))) throw notFound(`Tenant ${tenantId}`);
  }

  /** Creates a group, with members if named (SCIM POST), audited; 409 on a taken name or external id. */
  async create(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts: { where?: string; members?: string[] } = {},
  ): Promise<GroupView> {
    await this.requireTenant(tenantId);
    const body: CreateGroupInput = parseInput(CreateGroupInput, input, opts.where ?? '');
    const members = [...new Set(opts.members ?? [])];
    const id = newId(GROUP_ID_PREFIX);
    const now = Date.now();
    await this.uniquely(body, () =>
      this.db.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId);
        await this.requireUsers(scope, members, 'members');
        await scope.groups.insert({
          id,
          display_name: body.display_name,
          display_name_key: nameKey(body.display_name),
          description: body.description ?? null,
          external_id: body.external_id ?? null,
          created_at: now,
          updated_at: now,
        });
        for (const u of members) await scope.groups.addMember(id, u, now);
        await audit(tx, actor, {
          tenantId,
          action: 'group.create',
          targetType: 'group',
          targetId: id,
          summary: { display_name: body.display_name, ...(members.length ? { members_added: members.length } : {}) },
        });
      }),
    );
    return this.get(tenantId, id);
  }

  /** One group with its member count; another tenant's group is 404 like no group. */
  async get(tenantId: string, groupId: string, db: Database | Tx = this.db): Promise<GroupView> {
    const scope = new TenantScope(db, tenantId);
    const g = await scope.groups.get(groupId);
    if (!g) throw groupNotFound(groupId);
    return { ...listItem(tenantId, g), member_count: await scope.groups.memberCount(groupId) };
  }

  /** The stored row (SCIM builds its representation from it), or undefined. */
  row(tenantId: string, groupId: string): Promise<GroupRow | undefined> {
    return new TenantScope(this.db, tenantId).groups.get(groupId);
  }

  /** GET …/groups: one page in (created_at, id) order, by name prefix if asked. */
  async list(tenantId: string, input: unknown, where = 'query'): Promise<GroupPage> {
    await this.requireTenant(tenantId);
    const q = parseInput(GroupListQuery, input, where);
    const limit = q.limit ?? GROUP_PAGE_DEFAULT;
    const rows = await new TenantScope(this.db, tenantId).groups.list({
      after: q.cursor === undefined ? undefined : this.cursors.decode(q.cursor),
      nameKeyPrefix: q.name_prefix === undefined ? undefined : nameKey(q.name_prefix),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      groups: page.map((g) => listItem(tenantId, g)),
      ...(rows.length > limit && last ? { next_cursor: this.cursors.encode(last.created_at, last.id) } : {}),
    };
  }

  /** PATCH …/groups/{id}: the fields named, under an optional If-Match (412), audited with old and new. */
  async update(tenantId: string, groupId: string, input: unknown, actor: Actor, pre: Precondition = {}) {
    const body: PatchGroupInput = parseInput(PatchGroupInput, input, 'body');
    return this.change(tenantId, groupId, body, actor, pre);
  }

  /**
   * One change of a group in one transaction, with the row locked: the If-Match, the fields,
   * member inserts and deletes, one version bump and one audit event per kind of change.
   * Unknown user ids among those added are 400 naming them, before anything is written.
   */
  async change(
    tenantId: string,
    groupId: string,
    c: GroupChange,
    actor: Actor,
    pre: Precondition = {},
  ): Promise<GroupView> {
    await this.apply(tenantId, groupId, c, actor, pre);
    return this.get(tenantId, groupId);
  }

  /** The change itself; returns the member rows inserted and deleted. */
  private async apply(
    tenantId: string,
    groupId: string,
    c: GroupChange,
    actor: Actor,
    pre: Precondition,
  ): Promise<{ added: number; removed: number }> {
    let added = 0;
    let removed = 0;
    await this.uniquely(c, () =>
      this.db.transaction(async (tx) => {
        added = 0;
        removed = 0;
        const scope = new TenantScope(tx, tenantId);
        const before = await scope.groups.get(groupId, { forUpdate: true });
        if (!before) throw groupNotFound(groupId);
        // RFC 9110 §13.2.1: the precondition is evaluated before the request's content is applied.
        if (pre.ifMatch !== undefined && !ifMatchesVersion(pre.ifMatch, before.version, pre.weak ?? false))
          throw preconditionFailed();
        const now = Math.max(Date.now(), before.updated_at + 1);
        let add = [...new Set(c.add ?? [])];
        let remove = [...new Set(c.remove ?? [])];
        if (c.replaceMembers) {
          const want = new Set(c.replaceMembers);
          const have = await this.allMemberIds(tx, tenantId, groupId);
          add = [...want].filter((u) => !have.has(u));
          remove = [...have].filter((u) => !want.has(u));
        }
        await this.requireUsers(scope, add, c.replaceMembers ? 'members' : 'user_ids');
        const after = {
          display_name: c.display_name ?? before.display_name,
          description: c.description === undefined ? before.description : c.description,
          external_id: c.external_id === undefined ? before.external_id : c.external_id,
        };
        const changes: Record<string, { old: unknown; new: unknown }> = {};
        for (const k of ['display_name', 'description', 'external_id'] as const)
          if (after[k] !== before[k]) changes[k] = { old: before[k], new: after[k] };
        for (const u of add) added += await scope.groups.addMember(groupId, u, now);
        for (const u of remove) removed += await scope.groups.removeMember(groupId, u);
        const fieldsChanged = Object.keys(changes).length > 0;
        if (!fieldsChanged && !added && !removed) return;
        if (fieldsChanged)
          await scope.groups.update(groupId, { ...after, display_name_key: nameKey(after.display_name) }, now);
        else await scope.groups.touch(groupId, now);
        const base = { tenantId, targetType: 'group', targetId: groupId };
        if (fieldsChanged) await audit(tx, actor, { ...base, action: 'group.update', summary: { changes } });
        if (added || removed)
          await audit(tx, actor, {
            ...base,
            action: 'group.members.update',
            summary: { added, removed, ...(add.length + remove.length <= 20 ? { add, remove } : {}) },
          });
      }),
    );
    return { added, removed };
  }

  /**
   * DELETE …/groups/{id}: 409 `group_in_use` while a SCIM mapping set names the group; otherwise
   * its members, its role assignments and the group, in one transaction, audited with counts.
   */
  async delete(tenantId: string, groupId: string, actor: Actor, pre: Precondition = {}) {
    const g = await new TenantScope(this.db, tenantId).groups.get(groupId);
    if (!g) throw groupNotFound(groupId);
    const sets = await this.deps.mappingSets.naming(tenantId, 'group', g.display_name);
    if (sets.length)
      throw new ApiError(
        409,
        'group_in_use',
        `Group ${g.display_name} is named by SCIM field-mapping set(s) ${sets.map((s) => s.setKey).join(', ')}; ` +
          'change those sets first.',
        { mapping_sets: sets.map((s) => ({ id: s.id, set_key: s.setKey })) },
      );
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const locked = await scope.groups.get(groupId, { forUpdate: true });
      if (!locked) throw groupNotFound(groupId);
      if (pre.ifMatch !== undefined && !ifMatchesVersion(pre.ifMatch, locked.version, pre.weak ?? false))
        throw preconditionFailed();
      // A rename between the check above and this lock would escape it: a renamed group is refused again.
      if (locked.display_name_key !== g.display_name_key) throw conflict('The group was renamed meanwhile; retry.');
      const members = await scope.groups.removeAllMembers(groupId);
      const assignments = await scope.groups.deleteRoleAssignments(groupId);
      await scope.groups.delete(groupId);
      await audit(tx, actor, {
        tenantId,
        action: 'group.delete',
        targetType: 'group',
        targetId: groupId,
        summary: { display_name: locked.display_name, members_removed: members, role_assignments_removed: assignments },
      });
      return { id: groupId, deleted: true as const, members_removed: members, role_assignments_removed: assignments };
    });
  }

  /** POST …/members: adds users (at most 1000), each a user of the tenant (400 naming the others). */
  async addMembers(tenantId: string, groupId: string, input: unknown, actor: Actor, where = 'body') {
    const { user_ids } = parseInput(AddMembersInput, input, where);
    const { added } = await this.apply(tenantId, groupId, { add: user_ids }, actor, {});
    const after = await this.get(tenantId, groupId);
    return { group_id: groupId, added, already_members: new Set(user_ids).size - added, version: after.version };
  }

  /** DELETE …/members/{userId}: removes one member; `revokeTokens` then signs the user out everywhere. */
  async removeMember(tenantId: string, groupId: string, userId: string, actor: Actor, revokeTokens = false) {
    const removed = (await this.apply(tenantId, groupId, { remove: [userId] }, actor, {})).removed > 0;
    let families = 0;
    // After the delete: a token minted before the sign-out is revoked by it, one after lacks the group.
    if (revokeTokens && removed)
      families = (await this.deps.userLifecycle.signOut(tenantId, userId, actor)).families_revoked;
    return { group_id: groupId, user_id: userId, removed, families_revoked: families };
  }

  /** GET …/members: a page in user id order. */
  async members(tenantId: string, groupId: string, input: unknown, where = 'query'): Promise<MemberPage> {
    const q = parseInput(MemberListQuery, input, where);
    const scope = new TenantScope(this.db, tenantId);
    if (!(await scope.groups.get(groupId))) throw groupNotFound(groupId);
    const limit = q.limit ?? GROUP_PAGE_DEFAULT;
    const afterUserId = q.cursor === undefined ? undefined : this.memberCursors.decode(q.cursor).id;
    const rows = await scope.groups.members(groupId, { afterUserId, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      members: page.map((m) => ({ user_id: m.user_id, email: m.email, name: m.name, added_at: m.created_at })),
      ...(rows.length > limit && last ? { next_cursor: this.memberCursors.encode(0, last.user_id) } : {}),
    };
  }

  /** A page of members with the user's display fields, after a user id (SCIM's representation). */
  memberRows(tenantId: string, groupId: string, afterUserId: string | undefined, limit: number) {
    return new TenantScope(this.db, tenantId).groups.members(groupId, { afterUserId, limit });
  }

  memberCount(tenantId: string, groupId: string): Promise<number> {
    return new TenantScope(this.db, tenantId).groups.memberCount(groupId);
  }

  /** GET …/users/{id}/groups: the user's groups by name (404 when no such user in the tenant). */
  async ofUser(tenantId: string, userId: string) {
    const scope = new TenantScope(this.db, tenantId);
    if (!(await scope.groups.existingUsers([userId])).has(userId)) throw notFound(`User ${userId}`);
    const rows = await scope.groups.ofUser(userId);
    return { user_id: userId, groups: rows.map((g) => listItem(tenantId, g)) };
  }

  private async allMemberIds(tx: Tx, tenantId: string, groupId: string): Promise<Set<string>> {
    const scope = new TenantScope(tx, tenantId).groups;
    const ids = new Set<string>();
    for (let after: string | undefined; ;) {
      const rows = await scope.members(groupId, { afterUserId: after, limit: 1000 });
      for (const r of rows) ids.add(r.user_id);
      if (rows.length < 1000) return ids;
      after = rows[rows.length - 1].user_id;
    }
  }

  /** 400 naming the ids that are no user of the tenant, checked 1000 at a time. */
  private async requireUsers(scope: TenantScope, ids: string[], field: string): Promise<void> {
    const unknown: string[] = [];
    for (let i = 0; i < ids.length; i += GROUP_MEMBERS_PER_CALL) {
      const chunk = ids.slice(i, i + GROUP_MEMBERS_PER_CALL);
      const known = await scope.groups.existingUsers(chunk);
      unknown.push(...chunk.filter((u) => !known.has(u)));
    }
    if (unknown.length)
      throw new ApiError(
        400,
        'unknown_users',
        `${field}: no such user in this tenant: ${unknown.slice(0, 20).join(', ')}` +
          (unknown.length > 20 ? ` and ${unknown.length - 20} more` : ''),
        { field, unknown_user_ids: unknown.slice(0, 100) },
      );
  }

  /** Runs a write; a unique violation is 409 `conflict` naming the field the index guards. */
  private async uniquely(fields: { display_name?: string; external_id?: string | null }, run: () => Promise<void>) {
    try {
      await run();
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const msg = String((e as Error).message);
      const field = /external/i.test(msg) && fields.external_id ? 'external_id' : 'display_name';
      throw conflict(
        field === 'external_id'
          ? `A group with external_id ${fields.external_id} already exists in this tenant.`
          : `A group named ${fields.display_name} already exists in this tenant (names compare without case).`,
        { field },
      );
    }
  }
}
