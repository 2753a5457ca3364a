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
import { ApiError } from '../../../shared/errors.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES, SCOPE_PLATFORM } from '../../../shared/scopes.js';
import { all, json, num } from '../../../shared/db/sql.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { requireTenantAccess } from './directory.js';

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 200;

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

interface Row {
  id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string;
  outcome: string;
  request_id: string | null;
  summary: unknown;
  created_at: unknown;
}

/** The cursor is base64url JSON of the last row's (created_at, id): opaque to callers, checked here. */
export function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function decodeCursor(cursor: string): [number, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      Number.isSafeInteger(v[0]) &&
      v[0] >= 0 &&
      typeof v[1] === 'string' &&
      v[1].length <= 40
    ) {
      return [v[0], v[1]];
    }
  } catch {
    /* reported below */
  }
  throw new ApiError(400, 'invalid_request', 'query.cursor: not a cursor returned by this endpoint.', {
    details: [{ field: 'query.cursor', message: 'not a cursor returned by this endpoint' }],
  });
}

export function auditRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/audit',
      summary: 'List audit events, newest first (keyset pagination)',
      tags: ['admin: audit'],
      security: 'bearer',
      scopes: ADMIN_SCOPES,
      query: AuditQuery,
      responses: {
        200: { description: 'one page of events; next_cursor when there may be more', schema: AuditPage },
        400: { description: 'invalid filter, limit or cursor', schema: ErrorObject },
        ...bearerErrors('tenant'),
      },
    },
    bearer(deps, ADMIN_SCOPES),
    async (ctx) => {
      const q = ctx.state.guard!.query as z.output<typeof AuditQuery>;
      const platform = String(ctx.state.auth?.scope ?? '')
        .split(' ')
        .includes(SCOPE_PLATFORM);
      let tenant = q.tenant_id;
      if (tenant !== undefined) requireTenantAccess(ctx, tenant);
      // A tenant admin is confined to its own tenant even when it names none.
      else if (!platform) tenant = String(ctx.state.auth!.tenant_id);

      const where: string[] = [];
      const params: unknown[] = [];
      const eq = (col: string, v: unknown) => {
        if (v !== undefined) {
          where.push(`${col} = ?`);
          params.push(v);
        }
      };
      eq('tenant_id', tenant);
      eq('action', q.action);
      eq('actor_id', q.actor_id);
      eq('target_id', q.target_id);
      eq('outcome', q.outcome);
      if (q.since !== undefined) {
        where.push('created_at >= ?');
        params.push(q.since);
      }
      if (q.until !== undefined) {
        where.push('created_at < ?');
        params.push(q.until);
      }
      if (q.cursor !== undefined) {
        const [at, id] = decodeCursor(q.cursor);
        where.push('(created_at < ? OR (created_at = ? AND id < ?))');
        params.push(at, at, id);
      }
      const limit = q.limit ?? AUDIT_DEFAULT_LIMIT;
      // One row more than asked tells whether another page exists without a COUNT.
      const rows = await all<Row>(
        deps.ds,
        `SELECT id, tenant_id, actor_type, actor_id, action, target_type, target_id, outcome, request_id, summary, created_at
       FROM audit_events ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`,
        params,
      );
      const page = rows.slice(0, limit).map((r) => ({
        id: r.id,
        tenant_id: r.tenant_id,
        actor_type: r.actor_type,
        actor_id: r.actor_id,
        action: r.action,
        target_type: r.target_type,
        target_id: r.target_id,
        outcome: r.outcome,
        request_id: r.request_id,
        summary: json<Record<string, unknown>>(r.summary) ?? {},
        created_at: num(r.created_at),
      }));
      const last = page[page.length - 1];
      ctx.body = {
        events: page,
        ...(rows.length > limit && last ? { next_cursor: encodeCursor(last.created_at, last.id) } : {}),
      };
    },
  );
  return router;
}
