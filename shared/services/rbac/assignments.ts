/**
 * Role assignments (docs/rbac.md, "Rules"): a role held by a user, a group of the
 * tenant, or a client_credentials client (machine-to-machine RBAC, by its client_id). Assigning
 * is idempotent; unassigning revokes nothing already issued unless the caller asks
 * (`revoke_tokens`, a user only: the user is signed out everywhere, through the same service as
 * the admin API's sign-out). And a user's effective roles, direct and through groups.
 */
import { CursorSigner } from '../../cursor.js';
import type { Database } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { TenantScope, type AssignmentRow } from '../../repositories/index.js';
import {
  AssignmentInput,
  AssignmentListQuery,
  type AssignmentView,
  type EffectiveRoles,
  type PrincipalType,
  type UnassignResult,
} from '../../schemas/rbac.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import { at, fieldError, loadRole, pageSize, requireTenant, roleView, type RbacDeps } from './common.js';

const view = (a: AssignmentRow): AssignmentView => ({ ...a });

export class AssignmentService {
  private readonly cursors: CursorSigner;

  constructor(
    private readonly db: Database,
    secretKey: string,
    private readonly deps: Pick<RbacDeps, 'signOut'>,
  ) {
    this.cursors = new CursorSigner(secretKey, 'rbac-assignments');
  }

  /** 400 unless the principal is the tenant's (and a client may use client_credentials). */
  private async checkPrincipal(scope: TenantScope, type: PrincipalType, id: string, where: string) {
    const field = at(where, 'principal_id');
    const missing = (what: string) => fieldError(400, 'principal_not_found', field, `no ${what} "${id}" in the tenant`);
    if (type === 'user') {
      if (!(await scope.users.get(id))) throw missing('user');
    } else if (type === 'group') {
      if (!(await scope.roleAssignments.groupExists(id))) throw missing('group');
    } else {
      const c = await scope.clients.getByClientId(id);
      if (!c) throw missing('client with this client_id');
      // A client holds a role for its own tokens (RFC 6749 §4.4): only one that can get any.
      if (!c.grant_types.includes('client_credentials'))
        throw fieldError(
          400,
          'client_credentials_required',
          field,
          `client ${id} does not use the client_credentials grant: only machine clients hold roles`,
        );
    }
  }

  /** POST …/roles/{id}/assignments: `created` false when the principal held it already (nothing written). */
  async assign(
    tenantId: string,
    roleId: string,
    input: unknown,
    actor: Actor,
    where = '',
  ): Promise<{ assignment: AssignmentView; created: boolean }> {
    await requireTenant(this.db, tenantId);
    const body = parseInput(AssignmentInput, input, where);
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      await loadRole(scope, roleId);
      await this.checkPrincipal(scope, body.principal_type, body.principal_id, where);
      const row: AssignmentRow = { role_id: roleId, ...body, created_at: Date.now() };
      const created = await scope.roleAssignments.add(row);
      if (!created) {
        const existing = await scope.roleAssignments.get(roleId, body.principal_type, body.principal_id);
        return { assignment: view(existing ?? row), created: false };
      }
      await audit(tx, actor, {
        tenantId,
        action: 'role.assign',
        targetType: 'role',
        targetId: roleId,
        summary: { principal_type: body.principal_type, principal_id: body.principal_id },
      });
      return { assignment: view(row), created: true };
    });
  }

  /** GET …/roles/{id}/assignments, in (principal_type, principal_id) order, keyset-paged. */
  async list(
    tenantId: string,
    roleId: string,
    input: unknown,
    where = 'query',
  ): Promise<{ assignments: AssignmentView[]; next_cursor?: string }> {
    await requireTenant(this.db, tenantId);
    const q = parseInput(AssignmentListQuery, input, where);
    const scope = new TenantScope(this.db, tenantId);
    await loadRole(scope, roleId);
    let after: { type: string; id: string } | undefined;
    if (q.cursor !== undefined) {
      const key = this.cursors.decode(q.cursor).id;
      const i = key.indexOf(':');
      after = { type: key.slice(0, i), id: key.slice(i + 1) };
    }
    const limit = pageSize(q.limit);
    const rows = await scope.roleAssignments.list(roleId, { type: q.principal_type, after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      assignments: page.map(view),
      ...(rows.length > limit && last
        ? { next_cursor: this.cursors.encode(0, `${last.principal_type}:${last.principal_id}`) }
        : {}),
    };
  }

  /**
   * DELETE …/roles/{id}/assignments/{type}/{principalId}: idempotent (`removed` false when there
   * was none). Without `revokeTokens` nothing already issued is revoked: the next refresh gets
   * the reduced scope. With it (a user only) the user is signed out everywhere after the
   * removal commits, by UserLifecycleService.signOut, audited as `user.sign_out`.
   * `precondition` (a caller's rule: the last platform administrator, docs/console.md) runs in
   * the removal's transaction with the role row locked (FOR UPDATE on MySQL; SQLite's gate
   * serialises), so two concurrent removals of the same role cannot both pass it; it throws to
   * refuse, and nothing is removed.
   */
  async unassign(
    tenantId: string,
    roleId: string,
    principal: { type: PrincipalType; id: string },
    actor: Actor,
    opts: { revokeTokens?: boolean; precondition?: (scope: TenantScope) => Promise<void> } = {},
  ): Promise<UnassignResult> {
    await requireTenant(this.db, tenantId);
    if (opts.revokeTokens && principal.type !== 'user')
      throw fieldError(
        400,
        'invalid_request',
        'query.revoke_tokens',
        "applies to a user's assignment only (a group's members are signed out one by one: iam users signout)",
      );
    const removed = await this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      await loadRole(scope, roleId, !!opts.precondition);
      await opts.precondition?.(scope);
      const n = await scope.roleAssignments.remove(roleId, principal.type, principal.id);
      if (n)
        await audit(tx, actor, {
          tenantId,
          action: 'role.unassign',
          targetType: 'role',
          targetId: roleId,
          summary: { principal_type: principal.type, principal_id: principal.id, revoke_tokens: !!opts.revokeTokens },
        });
      return n > 0;
    });
    const result: UnassignResult = {
      role_id: roleId,
      principal_type: principal.type,
      principal_id: principal.id,
      removed,
    };
    if (!opts.revokeTokens) return result;
    try {
      const r = await this.deps.signOut(tenantId, principal.id, actor);
      return { ...result, sessions_ended: r.sessions_ended, families_revoked: r.families_revoked };
    } catch (e) {
      // The user is gone (erased): nothing of theirs is left to revoke.
      if (e instanceof ApiError && e.status === 404) return { ...result, sessions_ended: 0, families_revoked: 0 };
      throw e;
    }
  }

  /**
   * GET …/users/{id}/roles: the roles the user holds directly and through groups, each with its
   * permissions and `via` (`direct`, then the group ids).
   */
  async effectiveRoles(tenantId: string, userId: string): Promise<EffectiveRoles> {
    await requireTenant(this.db, tenantId);
    const scope = new TenantScope(this.db, tenantId);
    if (!(await scope.users.get(userId))) throw notFound(`User ${userId}`);
    const via = new Map<string, string[]>();
    for (const a of await scope.roleAssignments.ofUser(userId)) {
      const list = via.get(a.role_id) ?? [];
      list.push(a.principal_type === 'user' ? 'direct' : a.principal_id);
      via.set(a.role_id, list);
    }
    const ids = [...via.keys()];
    const perms = await scope.roles.permissionsOf(ids);
    const roles: EffectiveRoles['roles'] = [];
    for (const id of ids) {
      const r = await scope.roles.get(id);
      if (!r) continue;
      const { permissions } = roleView(r, perms);
      const v = via.get(id)!.sort((a, b) => (a === 'direct' ? -1 : b === 'direct' ? 1 : a.localeCompare(b)));
      roles.push({ id: r.id, name: r.name, resource: r.resource, permissions, via: v });
    }
    roles.sort((a, b) => a.name.localeCompare(b.name));
    return { user_id: userId, roles };
  }
}
