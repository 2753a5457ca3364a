import { newId } from '../../crypto.js';
import { exec, type Db } from '../../db/sql.js';

export interface RequestMeta {
  ip?: string;
  userAgent?: string;
}

export type AuthEvent = 'email_code_sent' | 'email_code_verify' | 'session_created' | 'token' | 'refresh' | 'logout';

/** Every login attempt and its outcome, for the user's own history and for support. */
export async function recordAuthEvent(
  db: Db,
  e: {
    tenantId: string;
    userId: string | null;
    event: AuthEvent;
    outcome: 'success' | 'failure';
    reason?: string;
    clientId?: string;
    meta?: RequestMeta;
  },
): Promise<void> {
  await exec(
    db,
    'INSERT INTO auth_history (id, tenant_id, user_id, event, outcome, reason, client_id, ip, user_agent, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      newId('ah'),
      e.tenantId,
      e.userId,
      e.event,
      e.outcome,
      e.reason ?? null,
      e.clientId ?? null,
      e.meta?.ip?.slice(0, 64) ?? null,
      e.meta?.userAgent?.slice(0, 512) ?? null,
      Date.now(),
    ],
  );
}
