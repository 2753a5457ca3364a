/** Output helpers of `iam relationships` and `iam approvals`. */
import type { ApprovalRequestOut } from '../shared/schemas/approvals.js';
import type { RelationshipsOut } from '../shared/services/relationships.js';
import { CliFailure } from './base.js';
import { fields, table, time } from './format.js';

/** An ISO 8601 time or epoch milliseconds. */
export function parseWhen(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  const ms = Date.parse(v);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(v))
    throw new CliFailure(
      'invalid_time',
      `--${flag}: "${v}" is neither an ISO 8601 time (2026-11-22T03:00:00Z) nor epoch milliseconds`,
    );
  return ms;
}

export function relationshipsText(r: RelationshipsOut): string {
  const out: string[] = [];
  if (r.outgoing_relationships)
    out.push(
      `Outgoing (${r.user_id} is the subject):`,
      table(
        r.outgoing_relationships,
        [
          { header: 'id', value: (e) => e.id },
          { header: 'type', value: (e) => e.relationship_type },
          { header: 'related', value: (e) => `${e.related_subject_id} ${e.related_email ?? ''}` },
          { header: 'expires', value: (e) => (e.expires_at === null ? 'never' : time(e.expires_at)) },
        ],
        '  none',
      ),
    );
  if (r.incoming_relationships)
    out.push(
      `Incoming (${r.user_id} is the related user):`,
      table(
        r.incoming_relationships,
        [
          { header: 'id', value: (e) => e.id },
          { header: 'type', value: (e) => e.relationship_type },
          { header: 'subject', value: (e) => `${e.subject_id} ${e.subject_email ?? ''}` },
          { header: 'expires', value: (e) => (e.expires_at === null ? 'never' : time(e.expires_at)) },
        ],
        '  none',
      ),
    );
  return out.join('\n');
}

export function approvalText(a: ApprovalRequestOut): string {
  const lines = [
    `${a.id} (${a.public_request_id}): ${a.status}`,
    fields([
      ['action', `${a.requested_action} on ${a.resource_class} for ${a.audience}`],
      ['requester', a.requester_subject_id],
      ['target', a.target_subject_id],
      ['expires', time(a.expires_at)],
      ...(a.investigation_id ? ([['investigation', a.investigation_id]] as [string, string][]) : []),
    ]),
    '  steps:',
    ...a.approvals.map(
      (s) =>
        `    ${s.step_key}: ${s.status} (approver ${s.subject_id}${s.relation_type ? `, ${s.relation_type}` : ''}; ` +
        `notified ${s.notification_count}x)`,
    ),
  ];
  for (const g of a.grants) lines.push(`  grant ${g.id}: ${g.status}, expires ${time(g.expires_at)}`);
  return lines.join('\n');
}
