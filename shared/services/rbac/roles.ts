/**
 * Roles (docs/rbac.md, "Rules"): a named set of permissions, tenant-wide or scoped to one
 * resource. Create, read (with a strong ETag on `version`), PATCH and the permissions PUT under
 * an optional If-Match, and delete: refused while a client holds the role or a SCIM mapping set
 * names it (409 `role_in_use`), otherwise the role, its permissions and its user and group
 * assignments go in one transaction.
 */
import { CursorSigner } from '../../cursor.js';
import { newId } from '../../crypto.js';
import { isUniqueViolation, type Database } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import { TenantScope, type PermissionRow, type RoleRow } from '../../repositories/index.js';
import { RoleInput, RoleListQuery, RolePatchInput, RolePermissionsInput, type RoleView } from '../../schemas/rbac.js';
import { parseInput } from '../../schemas/validate.js';
import { ifMatchSatisfied } from '../agents/terms.js';
import { audit, type Actor } from '../audit.js';
import {
  at,
  fieldError,
  loadRole,
  pageSize,
  requireTenant,
  roleEtag,
  roleView,
  staleCursor,
  type RbacDeps,
} from './common.js';

const nameTaken = (name: string) =>
  new ApiError(409, 'conflict', `A role named "${name}" already exists in this tenant.`, { field: 'name' });

const stale = () =>
  new ApiError(
    412,
    'precondition_failed',
    "If-Match does not match the role's current ETag; read the role again (RFC 9110 §13.1.1).",
  );

export interface RoleWithEtag {
  role: RoleView;
  etag: string;
}

export class RoleService {
  private readonly cursors: CursorSigner;

  constructor(
    private readonly db: Database,
    secretKey: string,
    private readonly deps: Pick<RbacDeps, 'mappingSetsNaming'>,
  ) {
    this.cursors = new CursorSigner(secretKey, 'rbac-roles');
  }

  private async withEtag(scope: TenantScope, r: RoleRow): Promise<RoleWithEtag> {
    return { role: roleView(r, await scope.roles.permissionsOf([r.id])), etag: roleEtag(r.version) };
  }

  /** A role's resource, when set, must be one a client of the tenant registers (as a permission's). */
  private async checkResource(scope: TenantScope, resource: string | null | undefined, field: string) {
    if (resource && !(await scope.resourcePermissions.resourceRegistered(resource)))
      throw fieldError(
        400,
        'resource_not_registered',
        field,
        `no client of the tenant registers "${resource}" among its resource_identifiers`,
      );
  }

  /** POST …/roles. A name the tenant has (compared case-insensitively) is 409. */
  async create(tenantId: string, input: unknown, actor: Actor, where = ''): Promise<RoleWithEtag> {
    await requireTenant(this.db, tenantId);
    const body = parseInput(RoleInput, input, where);
    const now = Date.now();
    const row: RoleRow = {
      id: newId('role'),
      name: body.name,
      description: body.description ?? null,
      resource: body.resource ?? null,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    try {
      return await this.db.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId);
        await this.checkResource(scope, row.resource, at(where, 'resource'));
        if (await scope.roles.byName(row.name)) throw nameTaken(row.name);
        await scope.roles.insert(row);
        await audit(tx, actor, {
          tenantId,
          action: 'role.create',
          targetType: 'role',
          targetId: row.id,
          summary: { name: row.name, resource: row.resource },
        });
        return { role: roleView(row, []), etag: roleEtag(row.version) };
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(row.name);
      throw e;
    }
  }

  async get(tenantId: string, roleId: string): Promise<RoleWithEtag> {
    await requireTenant(this.db, tenantId);
    const scope = new TenantScope(this.db, tenantId);
    return this.withEtag(scope, await loadRole(scope, roleId));
  }

  /** GET …/roles: in name order, each with its permissions, keyset-paged. */
  async list(tenantId: string, input: unknown, where = 'query'): Promise<{ roles: RoleView[]; next_cursor?: string }> {
    await requireTenant(this.db, tenantId);
    const q = parseInput(RoleListQuery, input, where);
    const scope = new TenantScope(this.db, tenantId);
    let after: string | undefined;
    if (q.cursor !== undefined) {
      const at = await scope.roles.get(this.cursors.decode(q.cursor).id);
      if (!at) throw staleCursor();
      after = at.name;
    }
    const limit = pageSize(q.limit);
    const rows = await scope.roles.list({ after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const perms = await scope.roles.permissionsOf(page.map((r) => r.id));
    const last = page[page.length - 1];
    return {
      roles: page.map((r) => roleView(r, perms)),
      ...(rows.length > limit && last ? { next_cursor: this.cursors.encode(0, last.id) } : {}),
    };
  }

  /**
   * PATCH …/roles/{id}: name, description, resource. A new resource must fit every permission
   * the role holds (400 `permission_resource_mismatch`). The If-Match compare (RFC 9110
   * §13.1.1, strong; `*` matches) is made on the row this transaction holds.
   */
  async update(
    tenantId: string,
    roleId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<RoleWithEtag> {
    await requireTenant(this.db, tenantId);
    const where = opts.where ?? '';
    const body = parseInput(RolePatchInput, input, where);
    try {
      return await this.db.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId);
        const before = await loadRole(scope, roleId, true);
        if (opts.ifMatch !== undefined && !ifMatchSatisfied(opts.ifMatch, roleEtag(before.version))) throw stale();
        const after = {
          ...before,
          name: body.name ?? before.name,
          description: body.description === undefined ? before.description : body.description,
          resource: body.resource === undefined ? before.resource : body.resource,
        };
        const changes: Record<string, { old: unknown; new: unknown }> = {};
        for (const k of ['name', 'description', 'resource'] as const)
          if (after[k] !== before[k]) changes[k] = { old: before[k], new: after[k] };
        if (!Object.keys(changes).length) return this.withEtag(scope, before);
        if (
          changes.name &&
          after.name.toLowerCase() !== before.name.toLowerCase() &&
          (await scope.roles.byName(after.name))
        )
          throw nameTaken(after.name);
        if (changes.resource && after.resource) {
          await this.checkResource(scope, after.resource, at(where, 'resource'));
          const other = (await scope.roles.permissionsOf([roleId])).find((p) => p.resource !== after.resource);
          if (other)
            throw fieldError(
              400,
              'permission_resource_mismatch',
              at(where, 'resource'),
              `the role holds ${other.permission} of ${other.resource}: remove it before scoping the role to ` +
                'another resource',
            );
        }
        const now = Date.now();
        if ((await scope.roles.update({ ...after, updated_at: now })) !== 1) throw stale();
        await audit(tx, actor, {
          tenantId,
          action: 'role.update',
          targetType: 'role',
          targetId: roleId,
          summary: { changes },
        });
        return this.withEtag(scope, { ...after, version: before.version + 1, updated_at: now });
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(body.name ?? '');
      throw e;
    }
  }

  /**
   * PUT …/roles/{id}/permissions: replaces the role's permissions. Each, by id or by
   * (resource, permission), must be the tenant's (400 `unknown_permission` naming it) and, on
   * a role scoped to a resource, of that resource (400 `permission_resource_mismatch`).
   */
  async setPermissions(
    tenantId: string,
    roleId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<RoleWithEtag> {
    await requireTenant(this.db, tenantId);
    const where = opts.where ?? '';
    const body = parseInput(RolePermissionsInput, input, where);
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const role = await loadRole(scope, roleId, true);
      if (opts.ifMatch !== undefined && !ifMatchSatisfied(opts.ifMatch, roleEtag(role.version))) throw stale();
      const chosen = new Map<string, PermissionRow>();
      for (const [i, sel] of body.permissions.entries()) {
        const field = at(where, `permissions.${i}`);
        const p =
          typeof sel === 'string'
            ? await scope.resourcePermissions.get(sel)
            : await scope.resourcePermissions.byPair(sel.resource, sel.permission);
        const named = typeof sel === 'string' ? sel : `${sel.permission} of ${sel.resource}`;
        if (!p) throw fieldError(400, 'unknown_permission', field, `no permission ${named} in the tenant`);
        if (role.resource !== null && p.resource !== role.resource)
          throw fieldError(
            400,
            'permission_resource_mismatch',
            field,
            `${p.permission} is a permission of ${p.resource}; the role is scoped to ${role.resource}`,
          );
        chosen.set(p.id, p);
      }
      const before = (await scope.roles.permissionsOf([roleId])).map((p) => p.id);
      const { added, removed } = await scope.roles.setPermissions(roleId, [...chosen.keys()], Date.now());
      const now = Date.now();
      if ((await scope.roles.update({ ...role, updated_at: now })) !== 1) throw stale();
      await audit(tx, actor, {
        tenantId,
        action: 'role.permissions.set',
        targetType: 'role',
        targetId: roleId,
        summary: {
          added: [...chosen.keys()].filter((id) => !before.includes(id)),
          removed: before.filter((id) => !chosen.has(id)),
          rows: { added, removed },
        },
      });
      return this.withEtag(scope, { ...role, version: role.version + 1, updated_at: now });
    });
  }

  /**
   * DELETE …/roles/{id}: 409 `role_in_use` while a client holds it or a SCIM mapping set names
   * it (`clients`, `mapping_sets` name them); otherwise the role, its permissions and its user
   * and group assignments, in one transaction, audited with the count removed. Nothing already
   * issued is revoked: the holders' next refresh gets the reduced scope.
   */
  async delete(tenantId: string, roleId: string, actor: Actor): Promise<{ assignments_removed: number }> {
    await requireTenant(this.db, tenantId);
    const first = await loadRole(new TenantScope(this.db, tenantId), roleId);
    // Read before the transaction (the service reads on its own connection); a set created
    // between this read and the delete names a role that no longer exists, which the SCIM
    // mapping then ignores.
    const sets = await this.deps.mappingSetsNaming(tenantId, 'role', first.name);
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const role = await loadRole(scope, roleId, true);
      const clients = await scope.roleAssignments.clientsHolding(roleId);
      if (clients.length || sets.length) {
        const by = [
          ...(clients.length ? [`client(s) ${clients.join(', ')}`] : []),
          ...(sets.length ? [`SCIM mapping set(s) ${sets.map((s) => s.setKey).join(', ')}`] : []),
        ];
        throw new ApiError(
          409,
          'role_in_use',
          `Role ${role.name} is held or named by ${by.join(' and ')}; remove those first.`,
          {
            clients,
            mapping_sets: sets.map((s) => ({ id: s.id, set_key: s.setKey })),
          },
        );
      }
      const removed = await scope.roles.remove(roleId);
      await audit(tx, actor, {
        tenantId,
        action: 'role.delete',
        targetType: 'role',
        targetId: roleId,
        summary: {
          name: role.name,
          assignments_removed: removed.assignments,
          permissions_removed: removed.permissions,
        },
      });
      return { assignments_removed: removed.assignments };
    });
  }
}
