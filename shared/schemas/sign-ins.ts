/**
 * The sign-in history's request and response shapes (docs/directory.md, "Sign-in history"),
 * shared by the admin API, the account API and the OpenAPI document.
 */
import { z } from 'zod';
import { SIGN_IN_METHODS } from '../services/auth/history.js';
import { SIGN_INS_MAX_LIMIT } from '../services/sign-ins.js';

const epochMs = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** The start of an IP address as recorded (`203.0.113.`, `2001:db8:`): digits, hex, '.' and ':'. */
export const ipPrefix = z
  .string()
  .min(1)
  .max(45)
  .regex(/^[0-9A-Fa-f.:]+$/, "must be the start of an IP address (digits, hex letters, '.' and ':')");

/** The filters of GET /api/admin/tenants/{tenantId}/sign-ins and of a user's. */
export const SignInsQuery = z
  .strictObject({
    result: z.enum(['success', 'failure']).optional(),
    method: z.enum(SIGN_IN_METHODS as [string, ...string[]]).optional(),
    client_id: z.string().min(1).max(128).optional(),
    ip_prefix: ipPrefix.optional(),
    since: epochMs.optional().describe('epoch ms, inclusive'),
    until: epochMs.optional().describe('epoch ms, exclusive'),
    limit: z.coerce.number().int().min(1).max(SIGN_INS_MAX_LIMIT).optional(),
    cursor: z.string().min(1).max(512).optional().describe('next_cursor of the previous page'),
  })
  .refine((q) => q.since === undefined || q.until === undefined || q.since < q.until, {
    path: ['until'],
    message: 'must be after since',
  });

export const SignInRecord = z.object({
  id: z.string(),
  user_id: z.string().nullable(),
  method: z.enum(SIGN_IN_METHODS as [string, ...string[]]),
  result: z.enum(['success', 'failure']),
  reason: z.string().nullable().describe('why it failed (docs/directory.md); null for a success'),
  client_id: z.string().nullable(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  device: z.string().describe('the user agent as a device name'),
  created_at: z.number().int().describe('epoch ms'),
});

export const SignInPage = z.object({ sign_ins: z.array(SignInRecord), next_cursor: z.string().optional() });

/** The user's own: GET /api/account/sign-ins. */
export const OwnSignInsQuery = z.strictObject({
  cursor: z.string().min(1).max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
