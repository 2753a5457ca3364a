/**
 * Groups and roles held by SCIM attribute mapping (docs/scim.md, "Attribute mapping"): a mapping
 * of an active `scim` set with `targetType` `group` or `role` names a group (display name) or a
 * role (name), and its `source` is a SCIM filter over the User schema, e.g.
 * `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Finance"` or
 * `roles[value eq "accountant"]`. After every SCIM write of a user the filter is evaluated on the
 * user as stored: the user is a member of the group (holds the role) while it matches, and not
 * once it stops matching. Such groups and roles belong to provisioning: an administrator's own
 * assignment of the same group or role to that user is undone by the next SCIM write.
 *
 * A mapping naming a group or role the tenant does not have does nothing (the set may be
 * written before the group); the mapping set's own checks refuse a source that is not a filter.
 */
import type { FieldMapping, TenantScope } from '../../repositories/index.js';
import { matches, parseFilter } from './filter.js';
import type { ScimResource } from './render.js';
import { USER_TYPE } from './schema.js';

/** The group and role mappings of the tenant's active SCIM sets. */
export const membershipMappings = (mappings: FieldMapping[]) =>
  mappings.filter((m) => m.targetType === 'group' || m.targetType === 'role');

/** Refuses a `group` or `role` mapping whose source is not a SCIM filter over the User schema. */
export function checkMembershipSource(source: string): void {
  parseFilter(USER_TYPE, source);
}

/**
 * Brings the user's mapped memberships and role assignments in line with `user` (the stored
 * representation), in the caller's transaction. Returns what changed, for the audit event.
 */
export async function applyMembershipMappings(
  scope: TenantScope,
  userId: string,
  user: ScimResource,
  mappings: FieldMapping[],
  now: number,
): Promise<{ added: string[]; removed: string[] }> {
  const added: string[] = [];
  const removed: string[] = [];
  for (const m of membershipMappings(mappings)) {
    const held = matches(parseFilter(USER_TYPE, m.source), user);
    if (m.targetType === 'group') {
      const g = await scope.groups.byNameKey(m.target.toLowerCase());
      if (!g) continue;
      const changed = held
        ? await scope.groups.addMember(g.id, userId, now)
        : await scope.groups.removeMember(g.id, userId);
      // The group's ETag moves with its members (RFC 7644 §3.14).
      if (changed) await scope.groups.touch(g.id, now);
      if (changed) (held ? added : removed).push(`group:${g.display_name}`);
    } else {
      const r = await scope.roles.byName(m.target);
      if (!r) continue;
      const changed = held
        ? await scope.roleAssignments.add({
            role_id: r.id,
            principal_type: 'user',
            principal_id: userId,
            created_at: now,
          })
        : (await scope.roleAssignments.remove(r.id, 'user', userId)) > 0;
      if (changed) (held ? added : removed).push(`role:${r.name}`);
    }
  }
  return { added, removed };
}
