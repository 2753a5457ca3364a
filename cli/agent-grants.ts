/** Shared by the `iam agent-grants` commands: JSON flags and the printed summary. */
import { badRequest } from '../shared/errors.js';
import type { AgentGrantView } from '../shared/services/agents/grants.js';

/** Parses a JSON flag value, or refuses naming the flag. */
export function jsonFlag(flag: string, value: string | undefined): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw badRequest(`--${flag}: must be JSON`, [{ field: flag, message: 'must be JSON' }]);
  }
}

/** An expiry from --expires-at (ms since the epoch) or --expires-in-days. */
export function expiryFlag(at: number | undefined, days: number | undefined): number | undefined {
  if (at !== undefined) return at;
  if (days !== undefined) return Date.now() + Math.round(days * 24 * 3600 * 1000);
  return undefined;
}

export function grantSummary(g: AgentGrantView): string {
  return [
    `  client:           ${g.client_id}`,
    `  grantor:          ${g.grantor_user_id}`,
    ...(g.delegator_user_id ? [`  delegator:        ${g.delegator_user_id}`] : []),
    ...(g.machine_principal_id ? [`  machine principal: ${g.machine_principal_id}`] : []),
    `  details:          ${g.authorization_details.map((d) => String(d.type)).join(', ')}`,
    `  purpose:          ${g.purpose ?? '(none)'}`,
    `  expires:          ${new Date(g.expires_at).toISOString()}`,
    `  status:           ${g.status}, generation ${g.generation}, consent version ${g.consent_version}` +
      (g.consent_required ? ' (renewed consent required)' : ''),
  ].join('\n');
}
