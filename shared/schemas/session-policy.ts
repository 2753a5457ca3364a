/**
 * A tenant's session timeouts (docs/security.md, "Session timeouts"): how long a browser session
 * of the tenant may sit unused (idle) and how long it may live at all (absolute), as the admin
 * API, the CLI and the console take them. Keycloak calls them "SSO Session Idle" and "SSO Session
 * Max"; OWASP's Session Management Cheat Sheet asks for both.
 */
import { z } from 'zod';

/** The shortest timeout a tenant may set: five minutes (the idle check is precise to a minute). */
export const MIN_SESSION_TIMEOUT_SECONDS = 300;
/** The longest idle timeout: thirty days (longer than the absolute cap, it simply never applies). */
export const MAX_IDLE_TIMEOUT_SECONDS = 30 * 86_400;
/**
 * The longest absolute lifetime: the service's own seven days (SESSION_TTL_MS). A session's
 * `expires_at` is written when it is created, and the devices page and the purge read it, so a
 * tenant's policy can shorten a session's life but not stretch it past that.
 */
export const MAX_LIFETIME_SECONDS = 7 * 86_400;

const seconds = (max: number) =>
  z
    .number()
    .int('must be a whole number of seconds')
    .min(MIN_SESSION_TIMEOUT_SECONDS, `must be at least ${MIN_SESSION_TIMEOUT_SECONDS} seconds (5 minutes)`)
    .max(max, `must be at most ${max} seconds`);

export const SessionPolicyInput = z
  .strictObject({
    idleTimeoutSeconds: seconds(MAX_IDLE_TIMEOUT_SECONDS)
      .optional()
      .describe('A session unused this long ends (300 to 2592000 seconds); left out, no idle timeout'),
    maxLifetimeSeconds: seconds(MAX_LIFETIME_SECONDS)
      .optional()
      .describe("A session this old ends, however used (300 to 604800 seconds); left out, the service's 7 days"),
  })
  .describe("A tenant's session timeouts; PUT replaces them whole (a field left out is cleared)");

export type SessionPolicyInput = z.output<typeof SessionPolicyInput>;

export const SessionPolicyView = z.looseObject({
  tenantId: z.string(),
  policy: SessionPolicyInput.describe('The timeouts as stored (only the fields set)'),
  effective: z
    .looseObject({
      idleTimeoutSeconds: z.number().nullable().describe('null: no idle timeout'),
      maxLifetimeSeconds: z.number().describe('the absolute lifetime in force'),
    })
    .describe('What applies to the sessions of the tenant'),
});

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * A duration written `90s`, `30m`, `12h`, `7d` (or a bare number of seconds) in seconds, or
 * undefined when it is not one: what the CLI's flags and the console's fields take.
 */
export function parseDurationText(text: string): number | undefined {
  const m = /^\s*(\d{1,9})\s*([smhd]?)\s*$/i.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * UNITS[(m[2] || 's').toLowerCase()];
}

/** Seconds written back in the largest unit that divides them: 1800 → `30m`, 43200 → `12h`. */
export function formatDuration(secondsValue: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const)
    if (secondsValue % size === 0) return `${secondsValue / size}${unit}`;
  return `${secondsValue}s`;
}
