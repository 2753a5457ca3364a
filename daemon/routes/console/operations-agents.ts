/**
 * A tenant's agent grants in the console (docs/console.md, "Operations"; docs/agents.md): the
 * list, and narrowing a grant's authorization_details (RFC 9396) by unticking actions or entries.
 *
 * Narrowing is the admin API's PATCH (AgentGrantService.update) with the narrowed details and the
 * grant's ETag as read by the form (If-Match, RFC 9110 §13.1.1: a grant changed meanwhile is
 * 412). The service decides what is allowed (every ceiling again, nothing beyond the consented
 * terms) and does what a PATCH does: the generation goes up, so every token of the grant stops at
 * once, and the grantor must consent again.
 *
 * Revoking is the admin API's revoke (AgentGrantService.revoke): a dangerous move (step-up) with
 * the grant id typed to confirm, as `iam agent-grants revoke` asks for it. The grant is then
 * `revoked` for good, every token of it stops at once and no new one is issued.
 */
import Router from '@koa/router';
import type { Tenant } from '../../../shared/db/entities.js';
import { agentGrantEtag, type AgentGrantView } from '../../../shared/services/agents/grants.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { table, type Column } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { actorOf, confirmField, consoleKit, field, formOf, TENANTS, type Ctx, type Operator } from './kit.js';
import { sectionOf, subResourceOf, when } from './operations.js';

const LIST_MAX = 500;

type Detail = Record<string, unknown> & { type?: unknown; actions?: unknown };
const actionsOf = (d: Detail) =>
  Array.isArray(d.actions) ? d.actions.filter((a): a is string => typeof a === 'string') : undefined;
const typeOf = (d: Detail) => (typeof d.type === 'string' ? d.type : '?');
const detailsText = (g: AgentGrantView) =>
  (g.authorization_details as Detail[])
    .map((d) => {
      const a = actionsOf(d);
      return `<code>${esc(typeOf(d))}</code>${a ? `: ${a.map(esc).join(', ')}` : ''}`;
    })
    .join('<br>');

/** The form's ticked boxes (`keep`, repeated): one value or several. */
const ticked = (v: unknown) => new Set((Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string'));

export function consoleAgentGrantRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);
  const grants = deps.agentGrants;
  /** The grant of the path, or undefined with the 404 page set (another tenant's too). */
  const grantOf = (ctx: Ctx, op: Operator, t: Tenant) =>
    subResourceOf(kit, ctx, op, 'Agent grant', () => grants.get(t.id, ctx.params.grantId));

  api.page(
    router,
    { method: 'get', path: '/console/tenants/:tenantId/agent-grants' },
    kit.read(async (ctx, op, t) => {
      const base = sectionOf(t.id, '/agent-grants');
      const columns: Column<AgentGrantView>[] = [
        { key: 'id', label: 'Grant', cell: (g) => `<code>${esc(g.grant_id)}</code>`, sort: (g) => g.grant_id },
        { key: 'client', label: 'Agent', cell: (g) => `<code>${esc(g.client_id)}</code>`, sort: (g) => g.client_id },
        {
          key: 'grantor',
          label: 'Grantor',
          cell: (g) => `<code>${esc(g.grantor_user_id)}</code>`,
          sort: (g) => g.grantor_user_id,
        },
        { key: 'details', label: 'Allows', cell: detailsText },
        {
          key: 'state',
          label: 'State',
          cell: (g) =>
            `${esc(g.status)}, generation ${g.generation}` +
            (g.status === 'active' && g.consent_required ? '<br>waits for the grantor’s consent' : ''),
          sort: (g) => g.status,
        },
        { key: 'expires', label: 'Expires (UTC)', cell: (g) => when(g.expires_at), sort: (g) => g.expires_at },
        {
          key: 'act',
          label: 'Action',
          cell: (g) => {
            if (g.status !== 'active') return '';
            const at = `${base}/${encodeURIComponent(g.grant_id)}`;
            return `<a href="${esc(`${at}/narrow`)}">Narrow…</a><br><a href="${esc(`${at}/revoke`)}">Revoke…</a>`;
          },
        },
      ];
      kit.show(
        ctx,
        op,
        t,
        '/agent-grants',
        `${t.name}: agent grants`,
        table(ctx.query, base, columns, await grants.list(t.id, LIST_MAX), {
          caption: 'Agent grants, newest first',
          empty:
            'No agent grants. A grant is created through the admin API or <code>iam agent-grants create</code> ' +
            '(docs/agents.md).',
        }),
      );
    }),
  );

  const path = '/console/tenants/:tenantId/agent-grants/:grantId/narrow';
  api.page(
    router,
    { method: 'get', path },
    kit.read(async (ctx, op, t) => {
      const g = await grantOf(ctx, op, t);
      if (!g) return;
      const back = sectionOf(t.id, '/agent-grants');
      const boxes = (g.authorization_details as Detail[])
        .map((d, i) => {
          const a = actionsOf(d);
          const items = (a && a.length ? a : ['']).map((action, j) => {
            const id = `keep-${i}-${j}`;
            const label = action ? `<code>${esc(typeOf(d))}</code>: ${esc(action)}` : `<code>${esc(typeOf(d))}</code>`;
            return `<input id="${id}" name="keep" type="checkbox" value="${esc(`${i}:${action}`)}" checked>
<label for="${id}">${label}</label>`;
          });
          return `<fieldset><legend>Entry ${i + 1}</legend>${items.join('\n')}</fieldset>`;
        })
        .join('\n');
      kit.confirm(ctx, op, t, {
        section: '/agent-grants',
        title: 'Narrow agent grant',
        intro: `Narrow grant <code>${esc(g.grant_id)}</code> of agent <code>${esc(g.client_id)}</code> for
<code>${esc(g.grantor_user_id)}</code>: untick what to take away (an entry with nothing left is removed). Every
token of the grant stops at once, and the agent gets no new one until the grantor consents again.`,
        action: `${back}/${encodeURIComponent(g.grant_id)}/narrow`,
        fields: `<input type="hidden" name="if_match" value="${esc(agentGrantEtag(g.generation, !g.consent_required))}">
${boxes}`,
        button: 'Narrow grant',
        back,
      });
    }),
  );

  api.page(
    router,
    { method: 'post', path, parser: 'form' },
    kit.write({}, async (ctx, op, t) => {
      const g = await grantOf(ctx, op, t);
      if (!g) return;
      const b = formOf(ctx);
      const keep = ticked(b.keep);
      const before = g.authorization_details as Detail[];
      // Only what the grant holds can be kept: a value the form did not offer selects nothing.
      const after = before.flatMap((d, i) => {
        const a = actionsOf(d);
        if (!a || !a.length) return keep.has(`${i}:`) ? [d] : [];
        const left = a.filter((x) => keep.has(`${i}:${x}`));
        return left.length ? [{ ...d, actions: left }] : [];
      });
      const same = JSON.stringify(after) === JSON.stringify(before);
      if (same || !after.length)
        return kit.refuse(
          ctx,
          op,
          400,
          'Narrow agent grant',
          same ? 'Nothing was unticked, so nothing changed.' : 'Keep at least one action: a grant allows something.',
          TENANTS,
        );
      const ifMatch = field(b, 'if_match');
      try {
        await grants.update(
          t.id,
          g.grant_id,
          { authorization_details: after },
          actorOf(op),
          ifMatch ? { ifMatch } : {},
        );
      } catch (e) {
        // A ceiling or the consented terms refuse it (403), or it changed meanwhile (409/412).
        return kit.failed(ctx, op, e, 'Narrow agent grant', TENANTS);
      }
      kit.done(ctx, sectionOf(t.id, '/agent-grants'));
    }),
  );

  const revokePath = '/console/tenants/:tenantId/agent-grants/:grantId/revoke';
  api.page(
    router,
    { method: 'get', path: revokePath },
    kit.read(async (ctx, op, t) => {
      const g = await grantOf(ctx, op, t);
      if (!g) return;
      const back = sectionOf(t.id, '/agent-grants');
      kit.confirm(ctx, op, t, {
        section: '/agent-grants',
        title: 'Revoke agent grant',
        alert: g.status === 'active' ? '' : `This grant is ${esc(g.status)} already: revoking it again is refused.`,
        intro: `Revoke grant <code>${esc(g.grant_id)}</code> of agent <code>${esc(g.client_id)}</code> for
<code>${esc(g.grantor_user_id)}</code>, which allows:<br>${detailsText(g)}</p>
<p>Every token of the grant stops at once and the agent gets no new one under it. The grantor’s consent is
revoked with it. This cannot be undone: the agent needs a new grant to act again.`,
        action: `${back}/${encodeURIComponent(g.grant_id)}/revoke`,
        fields: confirmField(g.grant_id, 'the grant id'),
        button: 'Revoke grant',
        back,
      });
    }),
  );

  api.page(
    router,
    { method: 'post', path: revokePath, parser: 'form' },
    // The typed id is checked against the path's, before the grant is looked up (kit.ts).
    kit.write({ dangerous: true, confirm: (ctx) => ctx.params.grantId ?? '' }, async (ctx, op, t) => {
      const g = await grantOf(ctx, op, t);
      if (!g) return;
      try {
        await grants.revoke(t.id, g.grant_id, actorOf(op));
      } catch (e) {
        // Already revoked (409 agent_grant_not_active), or revoked concurrently (409 conflict).
        return kit.failed(ctx, op, e, 'Revoke agent grant', TENANTS);
      }
      kit.done(ctx, sectionOf(t.id, '/agent-grants'));
    }),
  );

  return router;
}
