/** What the `iam tenants get|update|offboard|restore` commands print of a tenant (docs/cli.md). */
import { fields, time } from './format.js';
import type { TenantListed } from '../shared/services/tenant-directory.js';

export function showTenant(t: TenantListed & { counts?: { users: number; clients: number; active_sessions: number } }) {
  const rows: [string, string][] = [
    ['id', t.id],
    ['name', t.name],
    ['state', t.lifecycle_state],
    ['allow signup', String(t.allow_signup)],
    ['created', time(t.created_at)],
    ['updated', `${time(t.updated_at)} (ETag "t${t.updated_at}")`],
  ];
  if (t.purge_after !== null) rows.push(['purge after', time(t.purge_after)]);
  if (t.counts) {
    rows.push(['users', String(t.counts.users)]);
    rows.push(['clients', String(t.counts.clients)]);
    rows.push(['active sessions', String(t.counts.active_sessions)]);
  }
  return fields(rows);
}
