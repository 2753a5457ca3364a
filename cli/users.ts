/** How `iam users get`, `iam users update` and `iam users list` print users, and read their time flags. */
import type { UserDetail } from '../shared/services/users.js';
import { CliFailure } from './base.js';
import { fields, list, time } from './format.js';

/** The user as `iam users get` and `iam users update` print it. */
export function userDetailFields(u: UserDetail, etag: string): string {
  const claims = Object.entries(u.claims).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return fields([
    ['id', u.id],
    ['email', `${u.email}${u.email_verified ? '' : ' (unverified)'}`],
    ['name', u.name],
    ['status', u.status],
    ['created', time(u.created_at)],
    ['updated', time(u.updated_at)],
    ['last sign-in', u.last_sign_in ? time(u.last_sign_in.at) : 'never'],
    ['upstream', list(u.upstream_identities.map((l) => `${l.issuer} ${l.subject}`))],
    ['passkeys', String(u.passkey_count)],
    ['claims', list(claims)],
    ['etag', etag],
  ]);
}

/** An ISO 8601 time or epoch milliseconds → epoch ms; anything else is a usage error naming the flag. */
export function epochFlag(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (/^\d{1,16}$/.test(v)) return Number(v);
  const ms = Date.parse(v);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(v)) {
    throw new CliFailure(
      'invalid_time',
      `--${flag}: "${v}" is neither an ISO 8601 time (2026-11-22T03:00:00Z) nor epoch milliseconds`,
      2,
    );
  }
  return ms;
}
