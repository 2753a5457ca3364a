/**
 * Operators of the console (docs/console.md, "Operators"): people who administer the service in
 * the browser. They are users of one platform tenant, the operators' directory, created on the
 * first `iam operators add` and recorded in service_meta as `platform_tenant_id` (set once per
 * database: a second creation that loses the race leaves its tenant unused, never a second
 * directory). An operator's role is a role of the groups-and-roles work (docs/rbac.md) held
 * in that tenant:
 * - `platform-admin`: every tenant, read and write;
 * - `auditor`: every tenant, read only;
 * - `tenant-admin:<tenant id>`: that one tenant, read and write; one role per administered
 *   tenant, so a tenant administrator of three tenants holds three roles and no table of tenant
 *   lists is needed (the role's name is the list; `iam operators list` reads it back).
 * Roles are assigned and removed through RbacService, so each move is audited as `role.assign`
 * / `role.unassign` in the platform tenant, plus `operator.add` / `operator.remove` naming the
 * operator role in words.
 */
import type { Database } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import { ServiceMetaRepository, TenantRepository, TenantScope } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import { ensureFirstPartyClient } from '../auth/account-console.js';
import type { Client } from '../../db/entities.js';
import type { DirectoryService } from '../directory.js';
import type { ProvisioningService } from '../provisioning/service.js';
import type { RbacService } from '../rbac/index.js';

export const PLATFORM_TENANT_META = 'platform_tenant_id';
export const OPERATOR_ROLES = ['platform-admin', 'tenant-admin', 'auditor'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** What one signed-in operator may do. */
export interface OperatorAccess {
  userId: string;
  platformAdmin: boolean;
  auditor: boolean;
  /** The tenants this operator administers as a tenant administrator. */
  tenants: string[];
}

export interface OperatorView {
  user_id: string;
  email: string;
  role: OperatorRole;
  tenant_id: string | null;
}

const operatorView = (user: { id: string; email: string }, role: OperatorRole, tenantId?: string): OperatorView => ({
  user_id: user.id,
  email: user.email,
  role,
  tenant_id: tenantId ?? null,
});

const roleName = (role: OperatorRole, tenantId?: string | null) =>
  role === 'tenant-admin' ? `tenant-admin:${tenantId}` : role;

const parseRole = (name: string): { role: OperatorRole; tenant_id: string | null } | undefined => {
  if (name === 'platform-admin' || name === 'auditor') return { role: name, tenant_id: null };
  if (name.startsWith('tenant-admin:')) return { role: 'tenant-admin', tenant_id: name.slice('tenant-admin:'.length) };
  return undefined;
};

/** A tenant the operator may see: every one for a platform administrator or an auditor. */
export const mayRead = (a: OperatorAccess, tenantId: string) =>
  a.platformAdmin || a.auditor || a.tenants.includes(tenantId);
/** A tenant the operator may change: an auditor changes nothing. */
export const mayWrite = (a: OperatorAccess, tenantId: string) => a.platformAdmin || a.tenants.includes(tenantId);
/** Whether the operator's view is every tenant (else only `tenants`). */
export const seesAll = (a: OperatorAccess) => a.platformAdmin || a.auditor;

export class OperatorService {
  constructor(
    private readonly db: Database,
    private readonly deps: {
      directory: () => Pick<DirectoryService, 'createUser'>;
      provisioning: () => Pick<ProvisioningService, 'createTenant' | 'waitFor'>;
      rbac: () => Pick<RbacService, 'roles' | 'assignments'>;
    },
  ) {}

  /** The platform tenant's id, if one was created. */
  platformTenantId(): Promise<string | undefined> {
    return new ServiceMetaRepository(this.db).get(PLATFORM_TENANT_META);
  }

  /**
   * The console's own client in the platform tenant (a first-party public client, code flow with
   * PKCE, like the account page's); undefined before the platform tenant exists.
   */
  async consoleClient(issuer: string): Promise<Client | undefined> {
    const platform = await this.platformTenantId();
    if (!platform) return undefined;
    return ensureFirstPartyClient(this.db, platform, {
      clientId: `console.${platform}`,
      name: 'Console',
      redirectUri: `${issuer}/console/callback`,
      actorId: 'console',
    });
  }

  /** The platform tenant, created (provisioned, then recorded) when there is none yet. */
  async ensurePlatformTenant(actor: Actor, timeoutMs = 120_000): Promise<string> {
    const known = await this.platformTenantId();
    if (known) return known;
    const { tenant } = await this.deps.provisioning().createTenant({ name: 'Operators' }, actor);
    await this.deps.provisioning().waitFor(tenant.id, { timeoutMs });
    const meta = new ServiceMetaRepository(this.db);
    await meta.insertIfAbsent(PLATFORM_TENANT_META, tenant.id, Date.now());
    return (await meta.get(PLATFORM_TENANT_META)) ?? tenant.id;
  }

  private async checkRole(role: string, tenantId: string | undefined): Promise<OperatorRole> {
    if (!(OPERATOR_ROLES as readonly string[]).includes(role))
      throw new ApiError(400, 'invalid_request', `role must be one of ${OPERATOR_ROLES.join(', ')}`, { field: 'role' });
    if (role === 'tenant-admin') {
      if (!tenantId)
        throw new ApiError(400, 'invalid_request', 'a tenant-admin names the tenant it administers', {
          field: 'tenant',
        });
      if (!(await new TenantRepository(this.db).get(tenantId)))
        throw new ApiError(404, 'not_found', `Tenant ${tenantId} not found.`);
    } else if (tenantId)
      throw new ApiError(400, 'invalid_request', `a ${role} holds every tenant: no tenant is named`, {
        field: 'tenant',
      });
    return role as OperatorRole;
  }

  /** Gives `email` (created in the platform tenant when new) the operator role. */
  async add(
    input: { email: string; role: string; tenantId?: string },
    actor: Actor,
  ): Promise<OperatorView & { created: boolean }> {
    const role = await this.checkRole(input.role, input.tenantId);
    const platform = await this.ensurePlatformTenant(actor);
    const scope = new TenantScope(this.db, platform);
    const email = input.email.trim().toLowerCase();
    let user = await scope.users.findByEmail(email);
    if (!user) {
      const made = await this.deps
        .directory()
        .createUser(platform, { email, name: email.split('@')[0] || email }, actor);
      user = (await scope.users.findByEmail(made.email))!;
    }
    const name = roleName(role, input.tenantId);
    const rbac = this.deps.rbac();
    const found = await scope.roles.byName(name);
    const roleId = found
      ? found.id
      : (await rbac.roles.create(platform, { name, description: 'console operator role' }, actor)).role.id;
    const { created } = await rbac.assignments.assign(
      platform,
      roleId,
      { principal_type: 'user', principal_id: user.id },
      actor,
    );
    const view = operatorView(user, role, input.tenantId);
    if (created) await this.audited(actor, platform, 'operator.add', view);
    return { ...view, created };
  }

  /**
   * Takes the operator role away; `removed` false when it was not held. The user stays. The last
   * platform administrator's role is not taken away (409 `last_platform_admin`), whoever asks.
   */
  async remove(
    input: { email: string; role: string; tenantId?: string },
    actor: Actor,
  ): Promise<OperatorView & { removed: boolean }> {
    const role = await this.checkRole(input.role, input.tenantId);
    const platform = await this.platformTenantId();
    const scope = platform ? new TenantScope(this.db, platform) : undefined;
    const user = scope && (await scope.users.findByEmail(input.email.trim().toLowerCase()));
    if (!platform || !scope || !user) throw new ApiError(404, 'not_found', `No operator ${input.email}.`);
    const view = operatorView(user, role, input.tenantId);
    const found = await scope.roles.byName(roleName(role, input.tenantId));
    if (!found) return { ...view, removed: false };
    // The platform keeps a platform administrator: without one nobody could add operators or
    // create tenants in the console (docs/console.md, "Operators"). Checked with the role row
    // locked, so two administrators removing each other at once cannot both succeed.
    const lastAdmin =
      role === 'platform-admin'
        ? async (tx: TenantScope) => {
            const holders = await tx.roleAssignments.list(found.id, { type: 'user', limit: 2 });
            if (holders.length === 1 && holders[0].principal_id === user.id)
              throw new ApiError(
                409,
                'last_platform_admin',
                `${user.email} is the last platform administrator: add another one before removing this role.`,
              );
          }
        : undefined;
    const { removed } = await this.deps
      .rbac()
      .assignments.unassign(platform, found.id, { type: 'user', id: user.id }, actor, { precondition: lastAdmin });
    if (removed) await this.audited(actor, platform, 'operator.remove', view);
    return { ...view, removed };
  }

  /** An operator move's audit row, naming the actor; written only when something changed. */
  private async audited(actor: Actor, platform: string, action: string, view: OperatorView): Promise<void> {
    await audit(this.db, actor, {
      tenantId: platform,
      action,
      targetType: 'user',
      targetId: view.user_id,
      summary: { role: view.role, tenant_id: view.tenant_id },
    });
  }

  /** Every operator role held, by role then email. */
  async list(): Promise<OperatorView[]> {
    const platform = await this.platformTenantId();
    if (!platform) return [];
    const rbac = this.deps.rbac();
    const out: OperatorView[] = [];
    const scope = new TenantScope(this.db, platform);
    const { roles } = await rbac.roles.list(platform, { limit: 1000 });
    for (const r of roles) {
      const parsed = parseRole(r.name);
      if (!parsed) continue;
      const { assignments } = await rbac.assignments.list(platform, r.id, { principal_type: 'user', limit: 1000 });
      for (const a of assignments) {
        const u = await scope.users.get(a.principal_id);
        if (u) out.push({ user_id: u.id, email: u.email, ...parsed });
      }
    }
    return out.sort((a, b) => a.role.localeCompare(b.role) || a.email.localeCompare(b.email));
  }

  /**
   * What a user of the platform tenant may do as an operator; undefined when the user is no
   * operator (or the session is of another tenant: only the platform tenant's users operate).
   */
  async access(tenantId: string, userId: string): Promise<OperatorAccess | undefined> {
    const platform = await this.platformTenantId();
    if (!platform || platform !== tenantId) return undefined;
    const { roles } = await this.deps.rbac().assignments.effectiveRoles(platform, userId);
    const a: OperatorAccess = { userId, platformAdmin: false, auditor: false, tenants: [] };
    for (const r of roles) {
      const p = parseRole(r.name);
      if (p?.role === 'platform-admin') a.platformAdmin = true;
      else if (p?.role === 'auditor') a.auditor = true;
      else if (p?.tenant_id) a.tenants.push(p.tenant_id);
    }
    return a.platformAdmin || a.auditor || a.tenants.length ? a : undefined;
  }
}
