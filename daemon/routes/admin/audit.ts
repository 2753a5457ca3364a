/**
 * GET /api/admin/audit: the append-only audit log, newest first. A platform admin reads every
 * tenant's events (and the platform-wide ones, tenant_id null), optionally filtered by
 * `tenant_id`; a tenant admin reads only its own tenant's, and naming another tenant is 403
 * `tenant_forbidden`. Keyset pagination over (created_at, id) descending: the opaque `cursor`
 * is the last row's pair, so pages neither skip nor repeat rows while new events are appended
 * (they sort before the cursor). Operator view: `iam audit list` (docs/cli.md).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { AUDIT_MAX_LIMIT } from '../../../shared/services/audit.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';

export { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT } from '../../../shared/services/audit.js';

const epochMs = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const token = (max: number) => z.string().min(1).max(max);

export const AuditQuery = z.strictObject({
  tenant_id: tenantId.optional(),
  action: token(64).optional(),
  actor_id: token(128).optional(),
  target_id: token(128).optional(),
  outcome: z.enum(['success', 'failure']).optional(),
  since: epochMs.optional().describe('epoch ms, inclusive'),
  until: epochMs.optional().describe('epoch ms, exclusive'),
  limit: z.coerce.number().int().min(1).max(AUDIT_MAX_LIMIT).optional(),
  cursor: z.string().min(1).max(512).optional().describe('next_cursor of the previous page'),
});

export const AuditEventView = z.object({
  id: z.string(),
  tenant_id: z.string().nullable(),
  actor_type: z.string(),
  actor_id: z.string(),
  action: z.string(),
  target_type: z.string(),
  target_id: z.string(),
  outcome: z.string(),
  request_id: z.string().nullable(),
  summary: z.record(z.string(), z.unknown()),
  created_at: z.number().int(),
});

const AuditPage = z.object({ events: z.array(AuditEventView), next_cursor: z.string().optional() });

export function auditRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const log = deps.auditLog;
  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/audit',
      operationId: 'listAuditEvents',
      summary: 'List audit events, newest first (keyset pagination)',
      tags: ['admin: audit'],
      security: 'bearer',
      // A tenant admin is confined to its own tenant even when it names none.
      tenant: 'query-or-all',
      authenticate: bearer(deps, ADMIN_SCOPES),
      scopes: ADMIN_SCOPES,
      query: AuditQuery,
      responses: {
        200: { description: 'one page of events; next_cursor when there may be more', schema: AuditPage },
        400: { description: 'invalid filter, limit or cursor', schema: ErrorObject },
        ...bearerErrors('tenant'),
      },
    },
    async (ctx) => {
      const q = ctx.state.guard.query;
      ctx.body = await log.page({
        tenantId: ctx.state.tenant ?? undefined,
        action: q.action,
        actorId: q.actor_id,
        targetId: q.target_id,
        outcome: q.outcome,
        since: q.since,
        until: q.until,
        limit: q.limit,
        cursor: q.cursor,
      });
    },
  );
  return router;
}
