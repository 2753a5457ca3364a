/**
 * RBAC administration (docs/rbac.md): API resource permissions, roles and role assignments,
 * one service per resource, as `deps.rbac` (routes) and `this.services.rbac` (CLI).
 */
import type { Database } from '../../db/index.js';
import type { Actor } from '../audit.js';
import { AssignmentService } from './assignments.js';
import type { FieldMappingSetService } from '../federation/mapping-sets.js';
import type { UserLifecycleService } from '../user-lifecycle.js';
import { PermissionService } from './permissions.js';
import { RoleService } from './roles.js';

export { roleEtag, type RbacDeps } from './common.js';
export type { RoleWithEtag } from './roles.js';

export class RbacService {
  readonly permissions: PermissionService;
  readonly roles: RoleService;
  readonly assignments: AssignmentService;

  /** The other areas' services, built by the container when first called. */
  constructor(
    db: Database,
    secretKey: string,
    services: {
      mappingSets: () => Pick<FieldMappingSetService, 'naming'>;
      userLifecycle: () => Pick<UserLifecycleService, 'signOut'>;
    },
  ) {
    const deps = {
      mappingSetsNaming: (t: string, kind: 'role', name: string) => services.mappingSets().naming(t, kind, name),
      signOut: (t: string, userId: string, actor: Actor) => services.userLifecycle().signOut(t, userId, actor),
    };
    this.permissions = new PermissionService(db, secretKey);
    this.roles = new RoleService(db, secretKey, deps);
    this.assignments = new AssignmentService(db, secretKey, deps);
  }
}
