/**
 * The admin API's user read, search and edit (docs/directory.md, "Users: read, search, edit"):
 * the list's query (every parameter bounded), the PATCH body, and the answers.
 */
import { z } from 'zod';
import { LIMITS } from './claims.js';
import { displayName, email } from './common.js';
import { UserView } from './admin.js';

/** The most users one page lists, and how many when the caller names no limit (as before). */
export const USER_PAGE_MAX = 1000;
export const USER_PAGE_DEFAULT = 100;
/** The user statuses the list filters on. */
export const USER_STATUSES = ['active', 'disabled'] as const;

const epochMs = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const UserListQuery = z.strictObject({
  email: email.optional().describe('exactly this address (compared in lower case)'),
  email_prefix: z
    .string()
    .trim()
    .toLowerCase()
    .min(1)
    .max(254)
    .optional()
    .describe('addresses starting with this (compared in lower case)'),
  name_prefix: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('names starting with this (ASCII letters compared without case)'),
  status: z.enum(USER_STATUSES).optional(),
  created_since: epochMs.optional().describe('created at or after (epoch ms)'),
  created_until: epochMs.optional().describe('created before (epoch ms)'),
  signed_in_since: epochMs.optional().describe('last successful sign-in at or after (epoch ms); never: left out'),
  signed_in_until: epochMs.optional().describe('last successful sign-in before (epoch ms); never: left out'),
  limit: z.coerce.number().int().min(1).max(USER_PAGE_MAX).optional(),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional().describe('rows to skip; not with cursor'),
  cursor: z.string().min(1).max(512).optional().describe('next_cursor of the previous page'),
});
export type UserListQuery = z.output<typeof UserListQuery>;

/** A user as the list shows one: the record's columns, its standard claims, and email_verified. */
export const UserListItem = UserView.extend({ email_verified: z.boolean() });

export const UserPage = z.object({
  users: z.array(UserListItem),
  next_cursor: z.string().optional().describe('present when there may be more: pass it back as cursor'),
});

export const UserDetailView = UserListItem.extend({
  last_sign_in: z
    .object({
      at: z.number().int(),
      method: z.string().nullable().describe('null: the history does not record the method'),
      client_id: z.string().nullable(),
    })
    .nullable()
    .describe('the latest successful sign-in; null: never'),
  upstream_identities: z.array(
    z.object({
      provider_id: z.string(),
      issuer: z.string(),
      subject: z.string(),
      state: z.string(),
      linked_at: z.number().int(),
    }),
  ),
  passkey_count: z.number().int(),
  claims: z.record(z.string(), z.unknown()).describe("the values of the tenant's active custom claim schemas"),
});

/**
 * PATCH: at least one member. An email change marks the address unverified unless
 * `email_verified: true` comes with it, and mails the old address. `claims` merges: a key left
 * out keeps its value, null clears it (checked by the custom claims service).
 */
export const PatchUserInput = z
  .strictObject({
    name: displayName.optional(),
    email: email.optional(),
    email_verified: z.boolean().optional(),
    claims: z
      .record(z.string().min(1).max(64), z.unknown(), { error: 'must be an object of claim key to value' })
      .refine((c) => Object.keys(c).length <= LIMITS.claimsPerWrite, {
        message: `at most ${LIMITS.claimsPerWrite} claims per write`,
      })
      .optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of name, email, email_verified, claims' });
export type PatchUserInput = z.output<typeof PatchUserInput>;
