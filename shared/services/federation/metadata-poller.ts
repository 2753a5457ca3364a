/**
 * The SAML metadata poller (docs/federation.md, "Polling" and "sourceState and what to do").
 * For each due trust source in `automatic` polling mode, or one named by an operator:
 *
 *  0. (due sources) take it in a small pool of workers shared fairly between tenants: a free
 *     worker takes the due source whose tenant has the fewest polls in flight, earliest due
 *     first, so every tenant with due work gets one poll in flight before any gets a second,
 *     and one tenant's slow sources cannot hold every worker while another tenant waits;
 *
 *  1. claim the source's row lease (one daemon per source; a crashed holder's lease expires);
 *  2. conditional GET of metadataUrl (SSRF-safe, https, metadataUrlPatterns, byte cap) to a
 *     temp file in the data directory; the validators are sent only for the URL that produced
 *     the copy held;
 *  3. verify and inventory in a capped worker thread (./metadata/), pinned certificates only;
 *  4. apply the validity policy (strict: validUntil required, at most 14 days ahead; an
 *     already expired document is refused whatever the policy);
 *  5. on success replace the inventory by a generation flip (never half-written) and record
 *     the poller fields; on any failure keep the last good copy, count the failure, back off
 *     and derive the sourceState (stale, expired, error, missing, identity_change_pending);
 *  6. raise or clear the operational notification states of the source.
 *
 * Steps 2 to 6 are ./source-poll.ts; the options and the outcome are ./poller-options.ts.
 */
import { rmSync } from 'node:fs';
import type { Database } from '../../db/index.js';
import { OperationLookups, TenantScope, type DueTrustSourceRef } from '../../repositories/index.js';
import type { FederationPollObserver } from '../../metrics.js';
import { NotificationStates } from '../notification-states.js';
import {
  pollerOptionsFromConfig,
  type PollerConfig,
  type PollerOptions,
  type PollOutcome,
  type PollResult,
} from './poller-options.js';
import { SourcePoll } from './source-poll.js';

export {
  DEFAULT_POLLER_OPTIONS,
  pollerOptionsFromConfig,
  TRUST_SOURCE_SUBJECT,
  type PollerConfig,
  type PollerOptions,
  type PollOutcome,
} from './poller-options.js';

/**
 * The one way to build the poller: the container (shared/container.ts) calls this with the
 * loaded configuration for the daemon's job and `iam federation poll` alike, so a limit an
 * operator sets (the byte cap, the deadline) holds for a manual poll exactly as for a scheduled one.
 */
export function createMetadataPoller(
  db: Database,
  config: PollerConfig,
  o: { holder: string; metrics?: FederationPollObserver },
): MetadataPoller {
  return new MetadataPoller(db, new NotificationStates(db), {
    ...pollerOptionsFromConfig(config, o.holder),
    metrics: o.metrics,
  });
}

export class MetadataPoller {
  private readonly lookups: OperationLookups;
  private readonly source: SourcePoll;

  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationStates,
    private readonly opts: PollerOptions,
  ) {
    this.lookups = new OperationLookups(db);
    this.source = new SourcePoll(db, notifications, opts, () => this.now());
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  /** Seconds since the most overdue due source (not being polled) fell due; 0 when none is. */
  async overdueSeconds(): Promise<number> {
    const now = this.now();
    const oldest = await this.lookups.oldestDueTrustSource(now);
    return oldest === undefined ? 0 : Math.max(0, (now - oldest) / 1000);
  }

  /** The most a poll holds a worker (the document deadline), ms: one poll slot. */
  get slotMs(): number {
    return this.opts.totalTimeoutMs;
  }

  /**
   * Polls due sources until none is left, `concurrency` at a time, fair across tenants: a free
   * worker takes, among the due sources read, one of the tenant with the fewest polls in
   * flight (earliest due first). The queue is read again whenever a poll ends and every
   * `rescanMs` while a worker is free, so a source falling due while slow polls run starts on
   * a free worker at once, and waits at most one slot (the document deadline) when every
   * worker is busy. Aborting `signal` starts nothing more and waits for the polls in flight
   * (each bounded by the deadline). `now` is the time of the first look at the queue.
   */
  async runDue(signal?: AbortSignal, now?: number): Promise<PollOutcome[]> {
    const out: PollOutcome[] = [];
    const waiting = new Map<string, DueTrustSourceRef>();
    const running = new Map<string, Promise<void>>();
    const inFlight = new Map<string, number>();
    const limit = Math.max(1, this.opts.concurrency);
    let at = now;
    let scanned = -Infinity;
    let wake: (() => void) | undefined;
    // A poll that throws (not a refused document: a database error) ends the round as the
    // sequential loop did: nothing more starts, the polls in flight finish, then it is thrown.
    let failure: { error: unknown } | undefined;
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      for (;;) {
        const stopped = () => !!signal?.aborted || failure !== undefined;
        const free = running.size < limit && !stopped();
        if (free && (running.size === 0 || this.now() - scanned >= this.opts.rescanMs || waiting.size === 0)) {
          scanned = this.now();
          for (const ref of await this.lookups.dueTrustSources(at ?? scanned, this.opts.batch))
            if (!running.has(ref.id) && !waiting.has(ref.id)) waiting.set(ref.id, ref);
          at = undefined;
        }
        while (running.size < limit && waiting.size && !stopped()) {
          const ref = this.fairest(waiting, inFlight);
          waiting.delete(ref.id);
          inFlight.set(ref.tenantId, (inFlight.get(ref.tenantId) ?? 0) + 1);
          this.opts.metrics?.federationPollsInFlight(running.size + 1);
          running.set(
            ref.id,
            this.poll(ref.tenantId, ref.id, false, ref.dueAt)
              .then(
                (o) => void out.push(o),
                (error: unknown) => void (failure ??= { error }),
              )
              .finally(() => {
                running.delete(ref.id);
                inFlight.set(ref.tenantId, inFlight.get(ref.tenantId)! - 1);
                this.opts.metrics?.federationPollsInFlight(running.size);
                wake?.();
              }),
          );
        }
        if (running.size === 0) break;
        // Until a poll ends, the next look at the queue, or the abort.
        await new Promise<void>((resolve) => {
          const timer = running.size < limit ? setTimeout(resolve, this.opts.rescanMs) : undefined;
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        // A due source read earlier that another daemon took meanwhile is skipped by its claim.
        if (stopped()) waiting.clear();
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (failure) throw failure.error instanceof Error ? failure.error : new Error(String(failure.error));
    return out;
  }

  /** The waiting source of the tenant with the fewest polls in flight, earliest due first. */
  private fairest(waiting: Map<string, DueTrustSourceRef>, inFlight: Map<string, number>): DueTrustSourceRef {
    let best: DueTrustSourceRef | undefined;
    for (const ref of waiting.values()) {
      if (!best) {
        best = ref;
        continue;
      }
      const a = inFlight.get(ref.tenantId) ?? 0;
      const b = inFlight.get(best.tenantId) ?? 0;
      if (a < b || (a === b && ref.dueAt < best.dueAt)) best = ref;
    }
    return best!;
  }

  /** Polls one source now, whatever its schedule and polling mode (the operator's trigger). */
  async pollNow(tenantId: string, sourceId: string): Promise<PollOutcome> {
    return this.poll(tenantId, sourceId, true, null);
  }

  private async poll(tenantId: string, id: string, force: boolean, dueAt: number | null): Promise<PollOutcome> {
    const startedAt = this.now();
    const latenessMs = dueAt === null ? null : Math.max(0, startedAt - dueAt);
    if (latenessMs !== null) this.opts.metrics?.federationPollLateness(latenessMs / 1000);
    const o = await this.pollOnce(tenantId, id, force, startedAt);
    return { ...o, dueAt, startedAt, finishedAt: this.now(), latenessMs };
  }

  private async pollOnce(tenantId: string, id: string, force: boolean, now: number): Promise<PollResult> {
    const scope = new TenantScope(this.db, tenantId);
    const holder = this.opts.holder;
    const skipped = (msg: string) => ({
      trustSourceId: id,
      tenantId,
      result: 'skipped' as const,
      sourceState: null,
      errorCode: null,
      message: msg,
      entityCount: null,
      nextRefreshAt: null,
      consecutiveFailures: 0,
    });
    if ((await scope.trustSources.claim(id, holder, now + this.opts.leaseMs, now, force)) !== 1)
      return skipped('the source is being polled elsewhere or is not due');
    const src = await scope.trustSources.get(id);
    if (!src) return skipped('the source is gone');
    let file: string | undefined;
    try {
      return await this.source.run(scope, src, (f) => (file = f));
    } finally {
      if (file) rmSync(file, { force: true });
    }
  }
}
