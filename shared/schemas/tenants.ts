/**
 * Request and response shapes of the directory's tenant routes (docs/directory.md, "Tenants";
 * docs/tenant-lifecycle.md, "Offboarding").
 */
import { z } from 'zod';
import { TenantView } from './admin.js';
import { displayName } from './common.js';

/** Every lifecycle state a tenant can be in (shared/db/entities.ts). */
export const TENANT_STATES = [
  'provisioning',
  'active',
  'suspended',
  'recovering',
  'pending_deletion',
  'purging',
  'deleted',
] as const;

/**
 * GET /api/admin/tenants: `lifecycle_state` is one state or several, comma-separated;
 * `name_prefix` is compared case-sensitively; `cursor` (from `next_cursor`) or the older
 * `offset`, not both.
 */
export const TenantListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
  cursor: z.string().min(1).max(600).optional(),
  lifecycle_state: z
    .string()
    .max(200)
    .transform((s) => s.split(',').map((x) => x.trim()))
    .pipe(z.array(z.enum(TENANT_STATES)).min(1))
    .optional(),
  name_prefix: z.string().min(1).max(200).optional(),
});
export type TenantListQuery = z.output<typeof TenantListQuery>;

/** A tenant as listed: the view, with the offboarding's due time (null unless pending_deletion). */
export const TenantListedView = TenantView.extend({ purge_after: z.number().int().nullable() });

export const TenantCounts = z.object({
  users: z.number().int(),
  clients: z.number().int(),
  active_sessions: z.number().int(),
});

/** GET /api/admin/tenants/{tenantId}: the view and its counts. */
export const TenantDetailView = TenantListedView.extend({ counts: TenantCounts });

export const TenantListView = z.object({
  tenants: z.array(TenantListedView),
  /** The cursor of the next page; null on the last one. */
  next_cursor: z.string().nullable(),
});

/** PATCH /api/admin/tenants/{tenantId}: at least one field. */
export const PatchTenantInput = z
  .strictObject({
    name: displayName.optional(),
    /** Whether an unknown address that proves it owns its mailbox becomes a user. */
    allow_signup: z.boolean().optional(),
  })
  .refine((v) => v.name !== undefined || v.allow_signup !== undefined, {
    message: 'name or allow_signup is required',
  });
export type PatchTenantInput = z.output<typeof PatchTenantInput>;

/** POST …/offboard: `confirm` is the tenant's name, typed. */
export const OffboardTenantInput = z.strictObject({
  confirm: z.string().min(1).max(200),
  reason: z.string().min(1).max(1000).optional(),
});

/** The offboarding export document (format `iam.tenant-export.v1`). */
export const TenantExportView = z.object({
  format: z.literal('iam.tenant-export.v1'),
  exported_at: z.number().int(),
  tenant: TenantListedView,
  users: z.array(z.record(z.string(), z.unknown())),
  clients: z.array(z.record(z.string(), z.unknown())),
  claim_schemas: z.array(z.record(z.string(), z.unknown())),
  upstream_idps: z.array(z.record(z.string(), z.unknown())),
});
