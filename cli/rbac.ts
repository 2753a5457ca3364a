/** What the `iam permissions` and `iam roles` commands share (docs/rbac.md, docs/cli.md). */
import { Flags } from '@oclif/core';
import { CliFailure } from './base.js';
import { fields, list, table, time } from './format.js';
import type { PermissionSelector, PrincipalType, RoleView } from '../shared/schemas/rbac.js';

export const tenantFlag = Flags.string({ description: 'id of the tenant', required: true });

/** --user, --group, --client: exactly one names the principal. */
export const principalFlags = {
  user: Flags.string({ description: 'a user id (usr_…)', exactlyOne: ['user', 'group', 'client'] }),
  group: Flags.string({ description: 'a group id (grp_…)', exactlyOne: ['user', 'group', 'client'] }),
  client: Flags.string({
    description: "a client_credentials client's client_id (machine-to-machine)",
    exactlyOne: ['user', 'group', 'client'],
  }),
};

export function principalOf(f: { user?: string; group?: string; client?: string }): {
  type: PrincipalType;
  id: string;
} {
  if (f.user !== undefined) return { type: 'user', id: f.user };
  if (f.group !== undefined) return { type: 'group', id: f.group };
  return { type: 'client', id: f.client! };
}

/**
 * A --permission value: a permission id (`perm_…`), or the resource and the permission
 * separated by one space (neither can contain a space: RFC 3986 §2, RFC 6749 §3.3).
 */
export function selectorOf(value: string): PermissionSelector {
  const v = value.trim();
  const i = v.indexOf(' ');
  if (i < 0) return v;
  const permission = v.slice(i + 1).trim();
  if (!permission || permission.includes(' '))
    throw new CliFailure('invalid_request', `--permission: "${value}" is neither an id nor "<resource> <permission>"`);
  return { resource: v.slice(0, i), permission };
}

export function roleText(r: RoleView): string {
  return [
    `Role ${r.name} (${r.id}), version ${r.version}`,
    fields([
      ['description', r.description ?? '-'],
      ['resource', r.resource ?? '- (tenant-wide)'],
      ['created', time(r.created_at)],
      ['updated', time(r.updated_at)],
      ['permissions', list(r.permissions.map((p) => `${p.permission} (${p.resource})`))],
    ]),
  ].join('\n');
}

export function rolesTable(roles: RoleView[]): string {
  return table(
    roles,
    [
      { header: 'id', value: (r) => r.id },
      { header: 'name', value: (r) => r.name },
      { header: 'resource', value: (r) => r.resource ?? '-' },
      {
        header: 'permissions',
        value: (r) =>
          list(
            r.permissions.map((p) => p.permission),
            ',',
          ),
      },
    ],
    'No roles.',
  );
}
