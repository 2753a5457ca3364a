/**
 * The admin API's groups and their members (docs/rbac.md): request bodies, list queries
 * (every parameter bounded) and the answers, snake_case like the users API.
 */
import { z } from 'zod';

/** The most groups or members one page lists, and how many when the caller names no limit. */
export const GROUP_PAGE_MAX = 1000;
export const GROUP_PAGE_DEFAULT = 100;
/** The most user ids one member add names. */
export const GROUP_MEMBERS_PER_CALL = 1000;

const idOf = (what: string) =>
  z
    .string()
    .min(1)
    .max(40)
    .regex(/^[A-Za-z0-9_-]+$/, `must be a ${what} id`);
export const groupId = idOf('group');
export const userId = idOf('user');

export const groupDisplayName = z.string().trim().min(1, 'must not be empty').max(200);
export const groupDescription = z.string().trim().max(500);
/** The provisioning client's id of the group (RFC 7643 §3.1), unique per tenant. */
export const groupExternalId = z.string().trim().min(1).max(255);

export const CreateGroupInput = z.strictObject({
  display_name: groupDisplayName.describe('1 to 200 characters, unique in the tenant without regard to case'),
  description: groupDescription.optional(),
  external_id: groupExternalId.optional().describe("a provisioning client's id of the group, unique in the tenant"),
});
export type CreateGroupInput = z.output<typeof CreateGroupInput>;

/** PATCH: at least one field; null clears description or external_id. */
export const PatchGroupInput = z
  .strictObject({
    display_name: groupDisplayName.optional(),
    description: groupDescription.nullable().optional(),
    external_id: groupExternalId.nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'name at least one field' });
export type PatchGroupInput = z.output<typeof PatchGroupInput>;

export const GroupListQuery = z.strictObject({
  name_prefix: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('display names starting with this, without regard to case'),
  limit: z.coerce.number().int().min(1).max(GROUP_PAGE_MAX).optional(),
  cursor: z.string().min(1).max(512).optional().describe('next_cursor of the previous page'),
});
export type GroupListQuery = z.output<typeof GroupListQuery>;

export const MemberListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(GROUP_PAGE_MAX).optional(),
  cursor: z.string().min(1).max(512).optional().describe('next_cursor of the previous page'),
});
export type MemberListQuery = z.output<typeof MemberListQuery>;

export const AddMembersInput = z.strictObject({
  user_ids: z
    .array(userId)
    .min(1)
    .max(GROUP_MEMBERS_PER_CALL)
    .describe(`1 to ${GROUP_MEMBERS_PER_CALL} ids of users of the tenant`),
});
export type AddMembersInput = z.output<typeof AddMembersInput>;

export const RemoveMemberQuery = z.strictObject({
  revoke_tokens: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: also sign the user out everywhere (sessions and token families end); default false'),
});

export const GroupView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  display_name: z.string(),
  description: z.string().nullable(),
  external_id: z.string().nullable(),
  member_count: z.number().int(),
  version: z.number().int(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type GroupView = z.output<typeof GroupView>;

export const GroupPage = z.object({
  groups: z.array(GroupView.omit({ member_count: true })),
  next_cursor: z.string().optional().describe('present when there may be more: pass it back as cursor'),
});
export type GroupPage = z.output<typeof GroupPage>;

export const GroupMemberView = z.object({
  user_id: z.string(),
  email: z.string(),
  name: z.string(),
  added_at: z.number().int(),
});

export const MemberPage = z.object({
  members: z.array(GroupMemberView),
  next_cursor: z.string().optional().describe('present when there may be more: pass it back as cursor'),
});
export type MemberPage = z.output<typeof MemberPage>;

export const AddMembersResult = z.object({
  group_id: z.string(),
  added: z.number().int().describe('users who were not members before'),
  already_members: z.number().int(),
  version: z.number().int(),
});

export const RemoveMemberResult = z.object({
  group_id: z.string(),
  user_id: z.string(),
  removed: z.boolean().describe('false: the user was not a member'),
  families_revoked: z.number().int().describe('token families ended (revoke_tokens=true), else 0'),
});

export const DeleteGroupResult = z.object({
  id: z.string(),
  deleted: z.literal(true),
  members_removed: z.number().int(),
  role_assignments_removed: z.number().int(),
});

export const UserGroupsView = z.object({
  user_id: z.string(),
  groups: z.array(GroupView.omit({ member_count: true })),
});
