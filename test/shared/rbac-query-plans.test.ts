/**
 * The directory's point reads and member changes are answered from an index (issue: a tenant of
 * 100,000 users and 5,000 groups; bench/scim-groups.ts has the figures). Each repository call
 * below runs on an empty SQLite database built by the migrations, its statements are captured
 * as they are prepared, and SQLite's EXPLAIN QUERY PLAN for each must neither SCAN a table nor
 * SEARCH one by `tenant_id` alone (a walk over every row of the tenant). SQLite's planner has
 * no statistics here (no ANALYZE), as in a fresh deployment, so the plans are the ones it picks
 * from the schema and the SQL alone.
 *
 * SQLite only: MariaDB's optimizer plans with statistics of its own (ava.mariadb.config.js).
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createDataSource, migrate } from '../../shared/db/data-source.js';
import { TenantScope } from '../../shared/repositories/index.js';

interface Conn {
  prepare(sql: string): { all(...p: unknown[]): { detail: string }[] };
}

/** The base tables whose rows grow with the tenant: a scan or a tenant-wide search of one is the bug. */
const TABLES = ['users', 'user_groups', 'group_members', 'roles', 'role_permissions', 'role_assignments'];

test('point reads and member changes of groups, roles and SCIM users use an index, never a tenant-wide walk', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-plans-'));
  const ds = await connect(createDataSource({ kind: 'sqlite', path: join(dir, 'iam.db') }));
  t.teardown(async () => {
    await ds.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrate(ds);
  const conn = (ds.driver as unknown as { databaseConnection: Conn }).databaseConnection;
  const seen: string[] = [];
  const prepare = conn.prepare.bind(conn);
  conn.prepare = (sql: string) => {
    seen.push(sql);
    return prepare(sql);
  };

  const plans: Record<string, string[]> = {};
  const s = new TenantScope(ds, 'ten_plans');
  const calls: Record<string, () => Promise<unknown>> = {
    'groups.byNameKey': () => s.groups.byNameKey('finance'),
    'groups.byExternalId': () => s.groups.byExternalId('ext-1'),
    'groups.ofUser': () => s.groups.ofUser('usr_1'),
    'groups.members': () => s.groups.members('grp_1', { afterUserId: 'usr_0', limit: 1001 }),
    'groups.memberCount': () => s.groups.memberCount('grp_1'),
    'groups.isMember': () => s.groups.isMember('grp_1', 'usr_1'),
    'groups.addMember': () => s.groups.addMember('grp_1', 'usr_1', 1),
    'groups.removeMember': () => s.groups.removeMember('grp_1', 'usr_1'),
    'scimUsers.byUserName': () => s.scimUsers.byUserName('alice@example.com'),
    'scimUsers.byExternalId': () => s.scimUsers.byExternalId('ext-1'),
    'rbacGrants.permissionsAmong': () => s.rbacGrants.permissionsAmong(['invoices:read']),
    'rbacGrants.anyPermission': () => s.rbacGrants.anyPermission(),
    'rbacGrants.heldByUser': () => s.rbacGrants.heldByUser('usr_1', ['invoices:read']),
    'rbacGrants.heldByClient': () => s.rbacGrants.heldByClient('app', ['invoices:read']),
    'rbacGrants.roleNamesOfUser': () => s.rbacGrants.roleNamesOfUser('usr_1', ['https://api.example.test']),
    'rbacGrants.groupNamesOfUser': () => s.rbacGrants.groupNamesOfUser('usr_1'),
    'roleAssignments.ofUser': () => s.roleAssignments.ofUser('usr_1'),
  };
  for (const [name, call] of Object.entries(calls)) {
    seen.length = 0;
    await call();
    t.true(seen.length > 0, `${name} ran no statement of its own (a cached statement is not re-prepared)`);
    plans[name] = seen.flatMap((sql) => {
      const holes = (sql.match(/\?/g) ?? []).length;
      return prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...Array<null>(holes).fill(null))
        .map((r) => r.detail);
    });
  }

  const bad: string[] = [];
  for (const [name, lines] of Object.entries(plans))
    for (const line of lines) {
      const table = /^(?:SCAN|SEARCH) (\w+)/.exec(line)?.[1];
      // The alias names the table in the plan: g, gm, m, r, ra, rp, p or the table itself.
      const base = table && (TABLES.includes(table) || /^(g|gm|m|r|ra|rp|u)$/.test(table));
      if (!base) continue;
      if (line.startsWith('SCAN ') || /\(tenant_id=\?\)$/.test(line)) bad.push(`${name}: ${line}`);
    }
  t.deepEqual(bad, [], JSON.stringify(plans, null, 1));
});
