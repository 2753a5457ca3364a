/**
 * Times in `--json` output as ISO 8601 (RFC 3339, UTC, to the millisecond), as the tables
 * already show them: `"created_at": "2026-11-22T03:00:00.123Z"`, not `1763780400123`. The
 * service keeps epoch milliseconds; only what the CLI prints changes, here, in one place
 * (cli/base.ts printJson's callers: every command's result).
 *
 * A time is a number in a field named `*_at`, `*At`, `expires`, `purge_after` or `purgeAfter`.
 * Left alone: durations (`expires_in`, `duration_ms`), values the operator passes back (the
 * `--json` error object's current values, a retry's `expected_updated_at`), anything inside
 * user data (claim values, plugin configuration: a custom claim may well be called `hired_at`),
 * and the commands whose output is an object of the interface specification with its times
 * fixed as int64 (see SPEC_TIME_COMMANDS).
 */

const TIME_KEY = /(?:_at|At)$|^(?:expires|purge_after|purgeAfter)$/;
/** Values the operator or the tenant wrote: printed as they are. */
const OPAQUE_KEYS = new Set([
  'claims',
  'custom_claims',
  'standard_claims',
  'config',
  'configuration',
  'scope_json',
  'protocolPayload',
  'authorization_details',
]);

/**
 * Commands (oclif ids, a topic covers its commands) whose `--json` is the admin API's object as
 * the interface specification defines it, times as int64: custom claim schemas, federation
 * trust sources, approval requests, relationships, agent grants, provisioning operations,
 * recovery operations, notification states, the tenant lifecycle moves. docs/cli.md, "Times in
 * --json".
 */
export const SPEC_TIME_COMMANDS = [
  'agent-grants',
  'approvals',
  'claims',
  'federation',
  'notifications',
  'provisioning',
  'recovery',
  'relationships',
  'tenants:suspend',
  'tenants:resume',
];

export function keepsEpochTimes(commandId: string | undefined): boolean {
  if (!commandId) return false;
  return SPEC_TIME_COMMANDS.some((c) => commandId === c || commandId.startsWith(`${c}:`));
}

function isoTime(v: number): string | number {
  const d = new Date(v);
  return Number.isInteger(v) && v >= 0 && !Number.isNaN(d.getTime()) ? d.toISOString() : v;
}

/** A copy of `value` with every time field (see above) as an ISO 8601 string. */
export function isoTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(isoTimes);
  if (value === null || typeof value !== 'object' || value.constructor !== Object) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (OPAQUE_KEYS.has(k)) out[k] = v;
    else if (typeof v === 'number' && TIME_KEY.test(k)) out[k] = isoTime(v);
    else out[k] = isoTimes(v);
  }
  return out;
}
