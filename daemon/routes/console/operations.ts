/**
 * A tenant's operational sections in the console (docs/console.md, "Operations"): federation trust
 * sources with "Poll now", operational notification states with "Resolve…", and (in
 * operations-approvals.ts, its own router) pending approval requests with their decisions. Each page reads the
 * service the admin API's route reads; each move is that route's service call, audited with the
 * operator's user id. The checks are the kit's, in its order (kit.ts): the tenant visible
 * (404), then for a post the CSRF token, a writer's role and only then the sub-resource, so an
 * auditor's post is 403 whatever it names and another tenant's ids answer 404.
 */
import Router from '@koa/router';
import type { TrustSourceView } from '../../../shared/services/federation/trust-source-view.js';
import type { NotificationStateView } from '../../../shared/services/notification-states.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { table, tenantPath, utc, type Column } from '../../views/console.js';
import { esc } from '../../views/html.js';
import { actorOf, consoleKit, type ConsoleKit, type Ctx, type Operator, TENANTS } from './kit.js';

/** At most this many rows are read for a section's table (the services' own page maxima). */
const SOURCES_MAX = 500;
const STATES_MAX = 200;

export const sectionOf = tenantPath;
export const when = (ms: unknown) => (typeof ms === 'number' ? utc(ms, 'second') : '-');

/**
 * A sub-resource lookup: the service's value, or undefined with the refusal page set in the
 * service's own words: 404 for an unknown id and another tenant's alike (the service reads
 * under the tenant's scope), 400 for an id it refuses to read. Not kit.ts's found(), which only
 * turns a 404 into undefined and sets no page.
 */
export async function subResourceOf<T>(
  kit: ConsoleKit,
  ctx: Ctx,
  op: Operator,
  what: string,
  read: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await read();
  } catch (e) {
    kit.failed(ctx, op, e, `${what} not found`, TENANTS);
    return undefined;
  }
}

const polling = (s: TrustSourceView) => (s.protocolPayload.polling ?? {}) as Record<string, unknown>;
/** A poller field that is text, or `fallback`. */
const textOf = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);
const sourceState = (s: TrustSourceView) => textOf(polling(s).sourceState, 'missing');

export function consoleOperationRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const kit = consoleKit(deps);
  const { trustSources, notifications } = deps.fieldMapping;

  // ---- federation trust sources ----

  api.page(
    router,
    { method: 'get', path: '/console/tenants/:tenantId/federation' },
    kit.read(async (ctx, op, t) => {
      const base = sectionOf(t.id, '/federation');
      const sources = await trustSources.list(t.id, SOURCES_MAX);
      const columns: Column<TrustSourceView>[] = [
        {
          key: 'name',
          label: 'Source',
          cell: (s) => `${esc(s.displayName)} <code>${esc(s.sourceKey)}</code>`,
          sort: (s) => s.displayName.toLowerCase(),
        },
        { key: 'lifecycle', label: 'Lifecycle', cell: (s) => esc(s.lifecycleState), sort: (s) => s.lifecycleState },
        {
          key: 'state',
          label: 'Source state',
          cell: (s) => esc(sourceState(s)),
          sort: sourceState,
        },
        {
          key: 'polled',
          label: 'Last poll (UTC)',
          cell: (s) => `${when(polling(s).lastAttemptAt)}<br>last good: ${when(polling(s).lastSuccessAt)}`,
          sort: (s) => Number(polling(s).lastAttemptAt ?? 0),
        },
        {
          key: 'errors',
          label: 'Errors',
          cell: (s) => {
            const p = polling(s);
            const n = Number(p.consecutiveFailures ?? 0);
            const code = textOf(p.lastErrorCode, '');
            return code ? `<code>${esc(code)}</code> (${n} in a row)` : 'none';
          },
          sort: (s) => Number(polling(s).consecutiveFailures ?? 0),
        },
        {
          key: 'poll',
          label: 'Poll',
          cell: (s) => `<a href="${esc(`${base}/${encodeURIComponent(s.id)}/poll`)}">Poll now…</a>`,
        },
      ];
      kit.show(
        ctx,
        op,
        t,
        '/federation',
        `${t.name}: federation`,
        table(ctx.query, base, columns, sources, {
          caption: 'Federation trust sources',
          empty:
            'No federation trust sources. Add one with <code>iam federation add</code> (docs/federation.md); its ' +
            'polling state shows here.',
        }),
      );
    }),
  );

  const pollPath = '/console/tenants/:tenantId/federation/:sourceId/poll';
  api.page(
    router,
    { method: 'get', path: pollPath },
    kit.read(async (ctx, op, t) => {
      const s = await subResourceOf(kit, ctx, op, 'Trust source', () => trustSources.get(t.id, ctx.params.sourceId));
      if (!s) return;
      const back = sectionOf(t.id, '/federation');
      kit.confirm(ctx, op, t, {
        section: '/federation',
        title: 'Poll now',
        intro: `Poll <strong>${esc(s.displayName)}</strong> (<code>${esc(s.sourceKey)}</code>) now, whatever its
schedule: its metadata is fetched, its signature checked against the pinned certificates and its entity inventory
replaced; a failed poll keeps the last good copy. The source state afterwards shows on the federation page.`,
        action: `${back}/${encodeURIComponent(s.id)}/poll`,
        button: 'Poll now',
        back,
      });
    }),
  );

  api.page(
    router,
    { method: 'post', path: pollPath, parser: 'form' },
    kit.write({}, async (ctx, op, t) => {
      const s = await subResourceOf(kit, ctx, op, 'Trust source', () => trustSources.get(t.id, ctx.params.sourceId));
      if (!s) return;
      // The poller of `iam federation poll` (the container's, as the job's): a refused document is
      // an outcome, recorded on the source, not an error of this page.
      await deps.federationPoller.pollNow(t.id, s.id);
      kit.done(ctx, sectionOf(t.id, '/federation'));
    }),
  );

  // ---- operational notification states ----

  api.page(
    router,
    { method: 'get', path: '/console/tenants/:tenantId/notifications' },
    kit.read(async (ctx, op, t) => {
      const asked = typeof ctx.query.state === 'string' ? ctx.query.state : 'open';
      const state = asked === 'resolved' || asked === 'all' ? asked : 'open';
      const base = sectionOf(t.id, '/notifications');
      const states = await notifications.list(t.id, state === 'all' ? {} : { state }, STATES_MAX);
      const columns: Column<NotificationStateView>[] = [
        {
          key: 'condition',
          label: 'Condition',
          cell: (n) => `<code>${esc(n.condition)}</code>`,
          sort: (n) => n.condition,
        },
        {
          key: 'subject',
          label: 'Subject',
          cell: (n) => `${esc(n.subjectType)} <code>${esc(n.subjectId)}</code>`,
          sort: (n) => n.subjectId,
        },
        {
          key: 'state',
          label: 'State',
          cell: (n) => esc(n.state) + (n.resolution ? ` (${esc(n.resolution)})` : ''),
          sort: (n) => n.state,
        },
        { key: 'seen', label: 'Occurrences', cell: (n) => String(n.occurrences), sort: (n) => n.occurrences },
        { key: 'raised', label: 'Raised (UTC)', cell: (n) => when(n.raisedAt), sort: (n) => n.raisedAt },
        {
          key: 'details',
          label: 'Details',
          cell: (n) =>
            `<details><summary>Details</summary><pre>${esc(JSON.stringify(n.details, null, 2))}</pre></details>`,
        },
        {
          key: 'act',
          label: 'Action',
          cell: (n) =>
            n.state === 'open' ? `<a href="${esc(`${base}/${encodeURIComponent(n.id)}/resolve`)}">Resolve…</a>` : '',
        },
      ];
      const form = `<form method="get" action="${esc(base)}" class="filters">
<label for="f-state">Show</label><select id="f-state" name="state">${(
        [
          ['open', 'Open'],
          ['resolved', 'Resolved'],
          ['all', 'All'],
        ] as const
      )
        .map(([v, l]) => `<option value="${v}"${v === state ? ' selected' : ''}>${l}</option>`)
        .join('')}</select>
<button type="submit" class="secondary">Filter</button></form>`;
      kit.show(
        ctx,
        op,
        t,
        '/notifications',
        `${t.name}: notifications`,
        `${form}
${table(ctx.query, `${base}?state=${state}`, columns, states, {
  caption: 'Operational notification states, newest first',
  empty:
    state === 'open'
      ? 'Nothing open: no condition needs an operator now. The federation poller and the field-mapping jobs open ' +
        'a state here when one does.'
      : 'No states to show with this filter.',
})}`,
      );
    }),
  );

  const resolvePath = '/console/tenants/:tenantId/notifications/:stateId/resolve';
  api.page(
    router,
    { method: 'get', path: resolvePath },
    kit.read(async (ctx, op, t) => {
      const n = await subResourceOf(kit, ctx, op, 'Notification state', () =>
        notifications.get(t.id, ctx.params.stateId),
      );
      if (!n) return;
      const back = sectionOf(t.id, '/notifications');
      kit.confirm(ctx, op, t, {
        section: '/notifications',
        title: 'Resolve notification state',
        intro: `Resolve <code>${esc(n.condition)}</code> about ${esc(n.subjectType)} <code>${esc(n.subjectId)}</code>
(now ${esc(n.state)}). It leaves the open list; while the condition still holds it is not raised again for this
subject until the condition has ended once.`,
        action: `${back}/${encodeURIComponent(n.id)}/resolve`,
        button: 'Resolve',
        back,
      });
    }),
  );

  api.page(
    router,
    { method: 'post', path: resolvePath, parser: 'form' },
    kit.write({}, async (ctx, op, t) => {
      try {
        // The admin API's resolve (POST …/operational-notification-states/{id}/resolve), audited
        // notification_state.resolve with the operator as the actor; an unknown id is 404.
        await notifications.resolve(t.id, ctx.params.stateId, undefined, actorOf(op));
      } catch (e) {
        return kit.failed(ctx, op, e, 'Notification state not found', TENANTS);
      }
      kit.done(ctx, sectionOf(t.id, '/notifications'));
    }),
  );

  return router;
}
