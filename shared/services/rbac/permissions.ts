/**
 * The permissions an API resource owns (docs/rbac.md, "Rules"): a scope token
 * (`invoices:read`) of one resource identifier that a client of the tenant registers. Created,
 * listed and deleted; a permission a role holds is not deleted (409 naming the roles).
 */
import { CursorSigner } from '../../cursor.js';
import { newId } from '../../crypto.js';
import { isUniqueViolation, type Database } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { TenantScope, type PermissionRow } from '../../repositories/index.js';
import { PermissionInput, PermissionListQuery, type PermissionView } from '../../schemas/rbac.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import { at, fieldError, pageSize, requireTenant, reservedScopeProblem, staleCursor } from './common.js';

const view = (p: PermissionRow): PermissionView => ({ ...p });

const duplicate = (resource: string, permission: string) =>
  new ApiError(409, 'conflict', `The resource ${resource} already has the permission ${permission}.`, {
    field: 'permission',
  });

export class PermissionService {
  private readonly cursors: CursorSigner;

  constructor(
    private readonly db: Database,
    secretKey: string,
  ) {
    this.cursors = new CursorSigner(secretKey, 'rbac-permissions');
  }

  /**
   * POST …/permissions. `resource` must be a resource identifier (RFC 8707 §2) one of the
   * tenant's clients registers; `permission` a scope token (RFC 6749 §3.3) that is not a
   * protocol or admin scope. A (resource, permission) pair the tenant has is 409.
   */
  async create(tenantId: string, input: unknown, actor: Actor, where = ''): Promise<PermissionView> {
    await requireTenant(this.db, tenantId);
    const body = parseInput(PermissionInput, input, where);
    const reserved = reservedScopeProblem(body.permission);
    if (reserved) throw fieldError(400, 'reserved_permission', at(where, 'permission'), reserved);
    const row: PermissionRow = {
      id: newId('perm'),
      resource: body.resource,
      permission: body.permission,
      description: body.description ?? null,
      created_at: Date.now(),
    };
    try {
      await this.db.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId);
        if (!(await scope.resourcePermissions.resourceRegistered(body.resource)))
          throw fieldError(
            400,
            'resource_not_registered',
            at(where, 'resource'),
            `no client of the tenant registers "${body.resource}" among its resource_identifiers`,
          );
        if (await scope.resourcePermissions.byPair(row.resource, row.permission))
          throw duplicate(row.resource, row.permission);
        await scope.resourcePermissions.insert(row);
        await audit(tx, actor, {
          tenantId,
          action: 'permission.create',
          targetType: 'permission',
          targetId: row.id,
          summary: { resource: row.resource, permission: row.permission },
        });
      });
    } catch (e) {
      // Two concurrent creates of one pair: the unique index decides.
      if (isUniqueViolation(e)) throw duplicate(row.resource, row.permission);
      throw e;
    }
    return view(row);
  }

  /** GET …/permissions: in (resource, permission) order, optionally of one resource, keyset-paged. */
  async list(
    tenantId: string,
    input: unknown,
    where = 'query',
  ): Promise<{ permissions: PermissionView[]; next_cursor?: string }> {
    await requireTenant(this.db, tenantId);
    const q = parseInput(PermissionListQuery, input, where);
    const scope = new TenantScope(this.db, tenantId);
    let after: { resource: string; permission: string } | undefined;
    if (q.cursor !== undefined) {
      const at = await scope.resourcePermissions.get(this.cursors.decode(q.cursor).id);
      if (!at) throw staleCursor();
      after = { resource: at.resource, permission: at.permission };
    }
    const limit = pageSize(q.limit);
    const rows = await scope.resourcePermissions.list({ resource: q.resource, after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      permissions: page.map(view),
      ...(rows.length > limit && last ? { next_cursor: this.cursors.encode(0, last.id) } : {}),
    };
  }

  /** DELETE …/permissions/{id}: 409 `permission_in_use` naming the roles that hold it. */
  async delete(tenantId: string, permissionId: string, actor: Actor): Promise<void> {
    await requireTenant(this.db, tenantId);
    await this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const p = await scope.resourcePermissions.get(permissionId);
      if (!p) throw notFound(`Permission ${permissionId}`);
      const roles = await scope.resourcePermissions.rolesHolding(p.id);
      if (roles.length)
        throw new ApiError(
          409,
          'permission_in_use',
          `Permission ${p.permission} of ${p.resource} is held by role(s) ${roles.map((r) => r.name).join(', ')}; ` +
            'remove it from them first.',
          { roles },
        );
      await scope.resourcePermissions.remove(p.id);
      await audit(tx, actor, {
        tenantId,
        action: 'permission.delete',
        targetType: 'permission',
        targetId: p.id,
        summary: { resource: p.resource, permission: p.permission },
      });
    });
  }
}
