/**
 * What the field-mapping routes share (docs/federation.md): each resource acts in the token's
 * own tenant or, for a platform admin, `?tenant_id=` (tenant binding `query`).
 */
import { z } from 'zod';
import { ADMIN_SCOPES } from '../../../../shared/scopes.js';
import {
  NOTIFICATIONS_DEFAULT_LIMIT,
  NOTIFICATIONS_MAX_LIMIT,
} from '../../../../shared/services/notification-states.js';
import type { AppDeps } from '../../../context.js';
import { bearer } from '../../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject } from '../../../openapi.js';
import { TenantQuery } from '../../../route-declarations.js';

export const base = '/api/admin/field-mapping';

/** The spec fields every field-mapping route shares: an admin's bearer token, bound by `?tenant_id=`. */
export const guardedBy = (deps: AppDeps) => ({
  security: 'bearer' as const,
  authenticate: bearer(deps, ADMIN_SCOPES),
  scopes: ADMIN_SCOPES,
  tenant: 'query' as const,
});

export const Paging = TenantQuery.extend({
  limit: z.coerce.number().int().min(1).max(500).optional().describe('at most this many (default 100, at most 500)'),
  offset: z.coerce.number().int().min(0).optional(),
});
export const NotificationQuery = TenantQuery.extend({
  state: z.enum(['open', 'resolved']).optional().describe('only states in this state'),
  condition: z.string().min(1).max(64).optional().describe('only this condition, e.g. metadata_expiring'),
  subjectId: z.string().min(1).max(128).optional().describe('only states about this subject, e.g. a trust source id'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(NOTIFICATIONS_MAX_LIMIT)
    .optional()
    .describe(
      `at most this many, newest first (default ${NOTIFICATIONS_DEFAULT_LIMIT}, at most ${NOTIFICATIONS_MAX_LIMIT})`,
    ),
  offset: z.coerce.number().int().min(0).optional(),
});
export const Id = z.strictObject({ id: z.string().min(1).max(128) });
export const StateId = z.strictObject({ stateId: z.string().min(1).max(128) });

export const common = {
  400: {
    description: 'invalid input; the message names the field (e.g. body.protocolPayload.polling.intervalSeconds)',
    schema: ErrorObject,
  },
  ...bearerErrors('tenant'),
};
export const notFound = { 404: { description: 'not found in this tenant', schema: ErrorObject } };
/** A platform admin's `?tenant_id=` naming no tenant (docs/conformance.md, declared error responses). */
export const noTenant = { 404: { description: "no such tenant (a platform admin's tenant_id)", schema: ErrorObject } };
export const idemErrors = {
  409: { description: 'conflict, or idempotency_in_flight', schema: ErrorObject },
  422: { description: 'idempotency_key_mismatch: the key was used with another body', schema: ErrorObject },
};

/**
 * On a replayed resolve (the idempotency middleware answered from its record) the transition
 * result says so: `idempotent` indicates replay (interface specification, "States and
 * transitions"). The first answer is recorded as it was sent; only the replay is marked.
 */
export const markReplayedTransition = (body: unknown): unknown => {
  const b = body as { result?: { idempotent?: boolean } } | undefined;
  return b?.result && typeof b.result === 'object' ? { ...b, result: { ...b.result, idempotent: true } } : body;
};
