/**
 * A tenant's approval requests in the console (docs/console.md, "Operations"; docs/approvals.md):
 * the requests of a status (pending first), their steps, and a pending step's decision.
 *
 * The decision is the admin API's (POST /api/admin/approvals/{id}/steps/{stepKey}/decision,
 * ApprovalService.decide): like an admin client, the operator records the decision of the step's
 * approver (`actor_subject_id` is the step's own subject, shown on the form), and the audit event
 * names the operator as the actor. The service keeps its rules: the requester never decides their
 * own request (403), a decided or expired step is 409, both shown in the service's words.
 */
import Router from '@koa/router';
import type { Tenant } from '../../../shared/db/entities.js';
import type { ApprovalRequestOut } from '../../../shared/schemas/approvals.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { esc } from '../../views/html.js';
import { actorOf, consoleKit, field, formOf, TENANTS, type Ctx, type Operator } from './kit.js';
import { sectionOf, subResourceOf, when } from './operations.js';

const STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
const LIST_MAX = 200;
const NOTE_MAX = 2000;

function requestCard(r: ApprovalRequestOut, base: string): string {
  const steps = r.approvals
    .map(
      (s) =>
        `<li><code>${esc(s.step_key)}</code>: ${esc(s.status)}, approver <code>${esc(s.subject_id)}</code>` +
        (s.status === 'pending'
          ? `, due ${when(s.expires_at)} <a href="${esc(
              `${base}/${encodeURIComponent(r.id)}/steps/${encodeURIComponent(s.step_key)}/decision`,
            )}">Decide…</a>`
          : s.decided_at
            ? `, decided ${when(s.decided_at)}`
            : '') +
        '</li>',
    )
    .join('');
  return `<tr><td data-label="Request"><code>${esc(r.public_request_id)}</code><br>${esc(r.status)}</td>
<td data-label="Asks"><code>${esc(r.requested_action)}</code> on <code>${esc(r.resource_class)}</code> for
${esc(r.audience)}</td>
<td data-label="Requester"><code>${esc(r.requester_subject_id)}</code></td>
<td data-label="Target"><code>${esc(r.target_subject_id)}</code></td>
<td data-label="Steps"><ul>${steps}</ul></td></tr>`;
}

export function consoleApprovalRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);
  const { approvals } = deps;

  api.page(
    router,
    { method: 'get', path: '/console/tenants/:tenantId/approvals' },
    kit.read(async (ctx, op, t) => {
      const asked = typeof ctx.query.status === 'string' ? ctx.query.status : 'pending';
      const status = (STATUSES as readonly string[]).includes(asked) ? (asked as (typeof STATUSES)[number]) : 'pending';
      const base = sectionOf(t.id, '/approvals');
      const { items, total } = await approvals.list(t.id, { status }, LIST_MAX);
      const form = `<form method="get" action="${esc(base)}" class="filters">
<label for="f-status">Status</label><select id="f-status" name="status">${STATUSES.map(
        (s) => `<option value="${s}"${s === status ? ' selected' : ''}>${s}</option>`,
      ).join('')}</select>
<button type="submit" class="secondary">Filter</button></form>`;
      const list = items.length
        ? `<table class="stack"><caption class="sr-only">Approval requests, newest first</caption>
<thead><tr><th scope="col">Request</th><th scope="col">Asks</th><th scope="col">Requester</th>
<th scope="col">Target</th><th scope="col">Steps</th></tr></thead>
<tbody>${items.map((r) => requestCard(r, base)).join('\n')}</tbody></table>${
            total > items.length ? `<p class="hint">The newest ${items.length} of ${total}.</p>` : ''
          }`
        : `<p class="empty">${
            status === 'pending'
              ? 'No approval request waits for a decision. Requests are opened through the admin API or ' +
                '<code>iam approvals</code> (docs/approvals.md).'
              : `No ${status} requests.`
          }</p>`;
      kit.show(ctx, op, t, '/approvals', `${t.name}: approvals`, `${form}\n${list}`);
    }),
  );

  const path = '/console/tenants/:tenantId/approvals/:requestId/steps/:stepKey/decision';
  /** The request and step of the path, or undefined with the 404 page set. */
  const stepOf = async (ctx: Ctx, op: Operator, t: Tenant) => {
    const r = await subResourceOf(kit, ctx, op, 'Approval request', () => approvals.get(t.id, ctx.params.requestId));
    if (!r) return undefined;
    const step = r.approvals.find((s) => s.step_key === ctx.params.stepKey);
    if (!step) kit.refuse(ctx, op, 404, 'Step not found', 'No such step in this approval request.', TENANTS);
    return step && { r, step };
  };
  api.page(
    router,
    { method: 'get', path },
    kit.read(async (ctx, op, t) => {
      const hit = await stepOf(ctx, op, t);
      if (!hit) return;
      const { r, step } = hit;
      const back = sectionOf(t.id, '/approvals');
      kit.confirm(ctx, op, t, {
        section: '/approvals',
        title: 'Decide an approval step',
        intro: `Request <code>${esc(r.public_request_id)}</code> (${esc(r.status)}): <code>${esc(
          r.requester_subject_id,
        )}</code> asks <code>${esc(r.requested_action)}</code> on <code>${esc(r.resource_class)}</code> about
<code>${esc(r.target_subject_id)}</code> for ${esc(r.audience)}.</p>
<p>You record the decision of step <code>${esc(step.step_key)}</code> for its approver <code>${esc(
          step.subject_id,
        )}</code>; the audit log names you. Approving the last pending step issues the grant; one denial ends the
request.`,
        action: `${back}/${encodeURIComponent(r.id)}/steps/${encodeURIComponent(step.step_key)}/decision`,
        fields: `<label for="decision">Decision</label>
<select id="decision" name="decision" required><option value="approve">Approve</option>
<option value="deny">Deny</option></select>
<label for="reason_note">Note (kept with the decision)</label>
<input id="reason_note" name="reason_note" type="text" maxlength="${NOTE_MAX}">`,
        button: 'Record decision',
        back,
      });
    }),
  );

  api.page(
    router,
    { method: 'post', path, parser: 'form' },
    kit.write({}, async (ctx, op, t) => {
      const hit = await stepOf(ctx, op, t);
      if (!hit) return;
      const { r, step } = hit;
      const b = formOf(ctx);
      const decision = field(b, 'decision');
      const note = field(b, 'reason_note');
      if ((decision !== 'approve' && decision !== 'deny') || note.length > NOTE_MAX)
        return kit.refuse(
          ctx,
          op,
          400,
          'Decide an approval step',
          `Choose approve or deny${note.length > NOTE_MAX ? `, with a note of at most ${NOTE_MAX} characters` : ''}.`,
          TENANTS,
        );
      try {
        await approvals.decide(
          t.id,
          r.id,
          step.step_key,
          { decision, actor_subject_id: step.subject_id, ...(note ? { reason_note: note } : {}) },
          actorOf(op),
        );
      } catch (e) {
        return kit.failed(ctx, op, e, 'Decide an approval step', TENANTS);
      }
      kit.done(ctx, sectionOf(t.id, '/approvals'));
    }),
  );
  return router;
}
