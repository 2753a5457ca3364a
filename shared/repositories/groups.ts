/**
 * A tenant's groups and their members (docs/rbac.md), reached through TenantScope
 * (`groups`). Groups are flat: a user's groups are one read of `ix_group_members_user`.
 *
 * Membership changes are single-row statements: an add is one INSERT that ignores a row already
 * there (the primary key (group_id, user_id) decides), a remove one DELETE; the service bumps
 * the group's `version` in the same transaction. Nothing reads a member list to write it back,
 * so two concurrent changes of one group's members never lose each other's rows.
 */
import { all, exec, insertIgnore, num, one, onMysql } from '../db/sql.js';
import type { ScopeRef } from './common.js';

export interface GroupRow {
  id: string;
  display_name: string;
  display_name_key: string;
  description: string | null;
  external_id: string | null;
  version: number;
  created_at: number;
  updated_at: number;
}

/** A member with the user's display fields, joined from `users` of the same tenant. */
export interface GroupMemberRow {
  user_id: string;
  email: string;
  name: string;
  user_name: string | null;
  created_at: number;
}

/** Where a keyset page resumes: after this row in (created_at, id) order. */
export interface GroupKeyset {
  createdAt: number;
  id: string;
}

const COLUMNS = 'id, display_name, display_name_key, description, external_id, version, created_at, updated_at';
const str = (v: unknown): string | null => (v === null || v === undefined ? null : `${v as string}`);
/** A LIKE pattern matching values that start with `prefix` (`!` escapes). */
const startsWith = (prefix: string) => `${prefix.replace(/[!%_]/g, (c) => `!${c}`)}%`;

const groupRow = (r: Record<string, unknown>): GroupRow => ({
  id: String(r.id),
  display_name: String(r.display_name),
  display_name_key: String(r.display_name_key),
  description: str(r.description),
  external_id: str(r.external_id),
  version: num(r.version),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

export class ScopedGroups {
  constructor(private readonly s: ScopeRef) {}

  async insert(g: Omit<GroupRow, 'version'>): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO user_groups
         (id, tenant_id, display_name, display_name_key, description, external_id, version, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)`,
      [
        g.id,
        this.s.tenantId,
        g.display_name,
        g.display_name_key,
        g.description,
        g.external_id,
        g.created_at,
        g.updated_at,
      ],
    );
  }

  /** One group; `forUpdate` locks its row on MySQL (SQLite's gate serialises transactions). */
  async get(id: string, opts: { forUpdate?: boolean } = {}): Promise<GroupRow | undefined> {
    const lock = opts.forUpdate && onMysql(this.s.db) ? ' FOR UPDATE' : '';
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM user_groups WHERE tenant_id = ? AND id = ?${lock}`,
      [this.s.tenantId, id],
    );
    return r && groupRow(r);
  }

  /** The group of a lower-cased name (ux_user_groups_name). */
  async byNameKey(key: string): Promise<GroupRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM user_groups WHERE tenant_id = ? AND display_name_key = ?`,
      [this.s.tenantId, key],
    );
    return r && groupRow(r);
  }

  /** The group of a provisioning client's external id (ux_user_groups_external). */
  async byExternalId(externalId: string): Promise<GroupRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM user_groups WHERE tenant_id = ? AND external_id = ?`,
      [this.s.tenantId, externalId],
    );
    return r && groupRow(r);
  }

  /**
   * A page of groups in (created_at, id) order (ix_user_groups_created): after `after`, those
   * whose lower-cased name starts with `nameKeyPrefix`, or modified after `modifiedAfter`.
   */
  async list(f: {
    after?: GroupKeyset;
    nameKeyPrefix?: string;
    modifiedAfter?: number;
    offset?: number;
    limit: number;
  }): Promise<GroupRow[]> {
    const where = ['tenant_id = ?'];
    const params: unknown[] = [this.s.tenantId];
    if (f.nameKeyPrefix !== undefined) {
      where.push("display_name_key LIKE ? ESCAPE '!'");
      params.push(startsWith(f.nameKeyPrefix));
    }
    if (f.modifiedAfter !== undefined) {
      where.push('updated_at > ?');
      params.push(f.modifiedAfter);
    }
    if (f.after) {
      where.push('(created_at > ? OR (created_at = ? AND id > ?))');
      params.push(f.after.createdAt, f.after.createdAt, f.after.id);
    }
    const offset = f.offset ? ' OFFSET ?' : '';
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM user_groups WHERE ${where.join(' AND ')} ORDER BY created_at, id LIMIT ?${offset}`,
      [...params, f.limit, ...(f.offset ? [f.offset] : [])],
    );
    return rows.map(groupRow);
  }

  /** The number of groups matching the list's filters (SCIM totalResults). */
  async count(f: { nameKeyPrefix?: string; modifiedAfter?: number } = {}): Promise<number> {
    const where = ['tenant_id = ?'];
    const params: unknown[] = [this.s.tenantId];
    if (f.nameKeyPrefix !== undefined) {
      where.push("display_name_key LIKE ? ESCAPE '!'");
      params.push(startsWith(f.nameKeyPrefix));
    }
    if (f.modifiedAfter !== undefined) {
      where.push('updated_at > ?');
      params.push(f.modifiedAfter);
    }
    const r = await one<{ n: unknown }>(
      this.s.db,
      `SELECT COUNT(*) AS n FROM user_groups WHERE ${where.join(' AND ')}`,
      params,
    );
    return num(r?.n ?? 0);
  }

  /**
   * Writes the group's fields and bumps its version. With `expectedVersion`, only if the version
   * is still that one (an If-Match decided in the statement itself). Returns the rows changed.
   */
  update(
    id: string,
    f: { display_name: string; display_name_key: string; description: string | null; external_id: string | null },
    now: number,
    expectedVersion?: number,
  ): Promise<number> {
    const guard = expectedVersion === undefined ? '' : ' AND version = ?';
    return exec(
      this.s.db,
      `UPDATE user_groups SET display_name = ?, display_name_key = ?, description = ?, external_id = ?,
              version = version + 1, updated_at = ?
        WHERE tenant_id = ? AND id = ?${guard}`,
      [
        f.display_name,
        f.display_name_key,
        f.description,
        f.external_id,
        now,
        this.s.tenantId,
        id,
        ...(expectedVersion === undefined ? [] : [expectedVersion]),
      ],
    );
  }

  /**
   * Bumps the version after a member change (the ETag moves, `meta.lastModified` too); with
   * `expectedVersion`, only from that one. Returns the rows changed (0: no such group, or the
   * version moved).
   */
  touch(id: string, now: number, expectedVersion?: number): Promise<number> {
    const guard = expectedVersion === undefined ? '' : ' AND version = ?';
    return exec(
      this.s.db,
      `UPDATE user_groups SET version = version + 1, updated_at = ? WHERE tenant_id = ? AND id = ?${guard}`,
      [now, this.s.tenantId, id, ...(expectedVersion === undefined ? [] : [expectedVersion])],
    );
  }

  delete(id: string): Promise<number> {
    return exec(this.s.db, 'DELETE FROM user_groups WHERE tenant_id = ? AND id = ?', [this.s.tenantId, id]);
  }

  /**
   * Adds one member: a single INSERT that leaves an existing row alone (the primary key decides,
   * so a concurrent add of the same user is a no-op too). Returns 1 when the row is new, else 0.
   */
  addMember(groupId: string, userId: string, now: number): Promise<number> {
    const ignore = insertIgnore(this.s.db);
    return exec(
      this.s.db,
      `${ignore} INTO group_members (tenant_id, group_id, user_id, created_at) VALUES (?, ?, ?, ?)`,
      [this.s.tenantId, groupId, userId, now],
    );
  }

  /** Removes one member; returns 1 when the user was a member, else 0. */
  removeMember(groupId: string, userId: string): Promise<number> {
    return exec(this.s.db, 'DELETE FROM group_members WHERE tenant_id = ? AND group_id = ? AND user_id = ?', [
      this.s.tenantId,
      groupId,
      userId,
    ]);
  }

  /** Removes every member of the group (its delete); returns how many. */
  removeAllMembers(groupId: string): Promise<number> {
    return exec(this.s.db, 'DELETE FROM group_members WHERE tenant_id = ? AND group_id = ?', [
      this.s.tenantId,
      groupId,
    ]);
  }

  /** Deletes the roles assigned to the group (principal_type `group`); returns how many. */
  deleteRoleAssignments(groupId: string): Promise<number> {
    return exec(
      this.s.db,
      "DELETE FROM role_assignments WHERE tenant_id = ? AND principal_type = 'group' AND principal_id = ?",
      [this.s.tenantId, groupId],
    );
  }

  /** Whether the user is a member (the primary key). */
  async isMember(groupId: string, userId: string): Promise<boolean> {
    const r = await one(
      this.s.db,
      'SELECT 1 AS x FROM group_members WHERE tenant_id = ? AND group_id = ? AND user_id = ?',
      [this.s.tenantId, groupId, userId],
    );
    return r !== undefined;
  }

  /** A page of the group's members in user id order (the primary key), after `afterUserId`. */
  async members(groupId: string, f: { afterUserId?: string; limit: number }): Promise<GroupMemberRow[]> {
    const after = f.afterUserId === undefined ? '' : ' AND m.user_id > ?';
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT m.user_id, m.created_at, u.email, u.name, u.user_name
         FROM group_members m
         JOIN users u ON u.tenant_id = m.tenant_id AND u.id = m.user_id
        WHERE m.tenant_id = ? AND m.group_id = ?${after}
        ORDER BY m.user_id LIMIT ?`,
      [this.s.tenantId, groupId, ...(f.afterUserId === undefined ? [] : [f.afterUserId]), f.limit],
    );
    return rows.map((r) => ({
      user_id: String(r.user_id),
      email: String(r.email),
      name: String(r.name),
      user_name: str(r.user_name),
      created_at: num(r.created_at),
    }));
  }

  async memberCount(groupId: string): Promise<number> {
    const r = await one<{ n: unknown }>(
      this.s.db,
      'SELECT COUNT(*) AS n FROM group_members WHERE tenant_id = ? AND group_id = ?',
      [this.s.tenantId, groupId],
    );
    return num(r?.n ?? 0);
  }

  /**
   * The groups the user is a member of, by name: from ix_group_members_user, then each group by
   * its key (CROSS JOIN keeps that order in SQLite; left free, its planner walked the tenant's
   * groups in name order and probed each for the user: test/shared/rbac-query-plans.test.ts).
   */
  async ofUser(userId: string): Promise<GroupRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT g.id, g.display_name, g.display_name_key, g.description, g.external_id, g.version,
              g.created_at, g.updated_at
         FROM group_members m
         CROSS JOIN user_groups g ON g.tenant_id = m.tenant_id AND g.id = m.group_id
        WHERE m.tenant_id = ? AND m.user_id = ?
        ORDER BY g.display_name_key`,
      [this.s.tenantId, userId],
    );
    return rows.map(groupRow);
  }

  /** Which of `userIds` are users of the tenant (at most 1000 ids a call; the primary key). */
  async existingUsers(userIds: string[]): Promise<Set<string>> {
    if (userIds.length === 0) return new Set();
    const rows = await all<{ id: string }>(
      this.s.db,
      `SELECT id FROM users WHERE tenant_id = ? AND id IN (${userIds.map(() => '?').join(', ')})`,
      [this.s.tenantId, ...userIds],
    );
    return new Set(rows.map((r) => String(r.id)));
  }
}
