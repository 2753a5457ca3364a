import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * Groups, API resource permissions, roles and their assignments (docs/rbac.md), and the user
 * columns SCIM 2.0 provisioning needs (docs/scim.md).
 *
 * - `user_groups` (GROUPS is a reserved word in MySQL 8): a tenant's groups, flat (no nesting,
 *   so a user's groups are one indexed read). `display_name_key` is the lower-cased name, unique
 *   per tenant; `external_id` is the provisioning client's id (RFC 7643 §3.1), unique per tenant
 *   (several NULLs are allowed by both databases). `version` is the weak ETag's counter.
 * - `group_members`: one row per (group, user). The primary key answers "is u a member of g", a
 *   member add or remove, a group's member count and pages; `ix_group_members_user` answers "the
 *   groups of u" at token time. The join tables' primary keys lead with tenant_id: every read
 *   goes through a tenant scope (`tenant_id = ? AND group_id = ?`), and a key on group_id alone
 *   ties with the (tenant_id, …) index on one equality column, so SQLite's planner took the
 *   tenant-wide index and walked every membership of the tenant (bench/scim-groups.ts). For the
 *   same reason the secondary indexes carry the column the read wants (`group_id`, `role_id`,
 *   `resource`): a covering index on two equality columns beats the covering primary key on one.
 *   test/shared/rbac-query-plans.test.ts checks the plans.
 * - `resource_permissions`: the permissions (scope strings, `invoices:read`) an API resource
 *   owns; `resource` is a resource identifier (RFC 8707) of one of the tenant's clients.
 *   `ix_resource_permissions_scope` answers "is this scope a permission of any resource", which
 *   decides whether a requested scope is governed by roles.
 * - `roles`: named sets of permissions, tenant-wide or scoped to one resource (`resource`).
 * - `role_permissions`, `role_assignments`: a role's permissions, and who holds it (a user, a
 *   group or a client, `principal_type`); `ix_role_assignments_principal` answers "the roles of
 *   this user, these groups or this client" at token time.
 * - `users.user_name`, `users.user_name_key` (lower-cased, unique per tenant: SCIM `userName` is
 *   case-insensitive, RFC 7643 §4.1.1), `users.external_id` (unique per tenant) and
 *   `users.scim_attributes` (JSON: attributes kept for the provisioning client, e.g. the
 *   enterprise extension, returned on GET).
 * - `auth_codes.resource`, `token_families.resource`: the resource indicators (RFC 8707) of the
 *   authorization request, a JSON list, NULL for none; the refresh grant keeps them.
 */
export class GroupsRolesScim1763769600041 implements MigrationInterface {
  name = 'GroupsRolesScim1763769600041';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE user_groups (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        display_name VARCHAR(200) NOT NULL,
        display_name_key VARCHAR(200) NOT NULL,
        description VARCHAR(500) NULL,
        external_id VARCHAR(255) NULL,
        version INTEGER NOT NULL DEFAULT 1,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      )${x}`,
      'CREATE UNIQUE INDEX ux_user_groups_name ON user_groups (tenant_id, display_name_key)',
      'CREATE UNIQUE INDEX ux_user_groups_external ON user_groups (tenant_id, external_id)',
      'CREATE INDEX ix_user_groups_created ON user_groups (tenant_id, created_at, id)',
      `CREATE TABLE group_members (
        tenant_id VARCHAR(40) NOT NULL,
        group_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, group_id, user_id)
      )${x}`,
      'CREATE INDEX ix_group_members_user ON group_members (tenant_id, user_id, group_id)',
      `CREATE TABLE resource_permissions (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        resource VARCHAR(512) NOT NULL,
        permission VARCHAR(128) NOT NULL,
        description VARCHAR(500) NULL,
        created_at BIGINT NOT NULL
      )${x}`,
      'CREATE UNIQUE INDEX ux_resource_permissions ON resource_permissions (tenant_id, resource, permission)',
      'CREATE INDEX ix_resource_permissions_scope ON resource_permissions (tenant_id, permission, resource)',
      `CREATE TABLE roles (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        name VARCHAR(100) NOT NULL,
        description VARCHAR(500) NULL,
        resource VARCHAR(512) NULL,
        version INTEGER NOT NULL DEFAULT 1,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      )${x}`,
      'CREATE UNIQUE INDEX ux_roles_name ON roles (tenant_id, name)',
      `CREATE TABLE role_permissions (
        tenant_id VARCHAR(40) NOT NULL,
        role_id VARCHAR(40) NOT NULL,
        permission_id VARCHAR(40) NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, role_id, permission_id)
      )${x}`,
      'CREATE INDEX ix_role_permissions_permission ON role_permissions (tenant_id, permission_id, role_id)',
      `CREATE TABLE role_assignments (
        tenant_id VARCHAR(40) NOT NULL,
        role_id VARCHAR(40) NOT NULL,
        principal_type VARCHAR(8) NOT NULL,
        principal_id VARCHAR(128) NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, role_id, principal_type, principal_id)
      )${x}`,
      `CREATE INDEX ix_role_assignments_principal
        ON role_assignments (tenant_id, principal_type, principal_id, role_id)`,
      'ALTER TABLE users ADD COLUMN user_name VARCHAR(320) NULL',
      'ALTER TABLE users ADD COLUMN user_name_key VARCHAR(320) NULL',
      'ALTER TABLE users ADD COLUMN external_id VARCHAR(255) NULL',
      'ALTER TABLE users ADD COLUMN scim_attributes TEXT NULL',
      'CREATE UNIQUE INDEX ux_users_user_name ON users (tenant_id, user_name_key)',
      'CREATE UNIQUE INDEX ux_users_external_id ON users (tenant_id, external_id)',
      'ALTER TABLE auth_codes ADD COLUMN resource TEXT NULL',
      'ALTER TABLE token_families ADD COLUMN resource TEXT NULL',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    const dropIndex = (name: string, table: string) =>
      isMysql(qr) ? `DROP INDEX ${name} ON ${table}` : `DROP INDEX ${name}`;
    await runAll(qr, [
      'ALTER TABLE token_families DROP COLUMN resource',
      'ALTER TABLE auth_codes DROP COLUMN resource',
      dropIndex('ux_users_external_id', 'users'),
      dropIndex('ux_users_user_name', 'users'),
      'ALTER TABLE users DROP COLUMN scim_attributes',
      'ALTER TABLE users DROP COLUMN external_id',
      'ALTER TABLE users DROP COLUMN user_name_key',
      'ALTER TABLE users DROP COLUMN user_name',
      'DROP TABLE role_assignments',
      'DROP TABLE role_permissions',
      'DROP TABLE roles',
      'DROP TABLE resource_permissions',
      'DROP TABLE group_members',
      'DROP TABLE user_groups',
    ]);
  }
}
