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
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '../../db/index.js';
import { downloadToFile, type DownloadPolicy } from '../../net/safe-download.js';
import { OutboundError } from '../../net/safe-fetch.js';
import { OperationLookups, TenantScope, type DueTrustSourceRef } from '../../repositories/index.js';
import type { InventoryRow } from '../../repositories/federation-entities.js';
import type { PollerFields, TrustSourceRow } from '../../repositories/federation.js';
import type { FederationPollObserver } from '../../metrics.js';
import type { Config } from '../../config.js';
import { NotificationStates } from '../notification-states.js';
import { MetadataError } from './metadata/scan.js';
import { urlMatchesPatterns } from './trust-sources.js';
import { DEFAULT_VERIFY_OPTIONS, StreamingVerification, type VerifyOptions } from './metadata/verifier.js';
import {
  backoffSeconds,
  EXPIRING_WITHIN_SECONDS,
  parseDuration,
  parseValidUntil,
  REFRESH_FAILING_AFTER,
  refreshAfterSeconds,
  stateAfterFailure,
  STRICT_MAX_VALIDITY_SECONDS,
  type SourceState,
} from './poll-policy.js';

export interface PollerOptions {
  /** Temp files go under `<dataDir>/federation-tmp`. */
  dataDir: string;
  allowLoopback: boolean;
  extraCaPem?: string;
  /** Largest metadata document accepted, bytes (IAM_FEDERATION_METADATA_MAX_BYTES). */
  maxBytes: number;
  connectTimeoutMs: number;
  /** No byte for this long ends a download. */
  idleTimeoutMs: number;
  /**
   * The deadline of one document, ms (IAM_FEDERATION_METADATA_DEADLINE_SECONDS): download and
   * the signature pass together, from the request on. A source that drips bytes just fast
   * enough to beat the idle timeout holds a worker this long at most: one poll slot.
   */
  totalTimeoutMs: number;
  verify: VerifyOptions;
  /** Row lease per source, ms (renewed while a large inventory is written). */
  leaseMs: number;
  /** Due sources read per look at the queue. */
  batch: number;
  /** Polls in flight at once (IAM_FEDERATION_POLL_CONCURRENCY). */
  concurrency: number;
  /**
   * While polls are in flight and a worker is free, how often the queue is read again, ms: a
   * source falling due during a long round starts within this, not when the round ends.
   */
  rescanMs: number;
  holder: string;
  /** The clock (epoch ms); tests move it to reach a validUntil without waiting. */
  now?: () => number;
  /** Lateness and polls in flight for /metrics (docs/metrics.md), when metrics are on. */
  metrics?: FederationPollObserver;
}

export const DEFAULT_POLLER_OPTIONS: Omit<PollerOptions, 'dataDir' | 'allowLoopback' | 'holder'> = {
  maxBytes: 200 * 1024 * 1024,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  totalTimeoutMs: 120_000,
  verify: DEFAULT_VERIFY_OPTIONS,
  leaseMs: 600_000,
  batch: 50,
  concurrency: 4,
  rescanMs: 5_000,
};

/** The settings of the poller an operator configures: the daemon's and the CLI's are the same. */
export type PollerConfig = Pick<
  Config,
  | 'dataDir'
  | 'outboundAllowLoopback'
  | 'outboundCaPem'
  | 'federationMetadataMaxBytes'
  | 'federationMetadataDeadlineSeconds'
  | 'federationPollConcurrency'
>;

/** The poller's options from the configuration (IAM_FEDERATION_*, IAM_OUTBOUND_*, IAM_DATA_DIR). */
export function pollerOptionsFromConfig(config: PollerConfig, holder: string): PollerOptions {
  return {
    ...DEFAULT_POLLER_OPTIONS,
    dataDir: config.dataDir,
    allowLoopback: config.outboundAllowLoopback,
    extraCaPem: config.outboundCaPem,
    maxBytes: config.federationMetadataMaxBytes,
    totalTimeoutMs: config.federationMetadataDeadlineSeconds * 1000,
    concurrency: config.federationPollConcurrency,
    holder,
  };
}

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

export interface PollOutcome {
  trustSourceId: string;
  tenantId: string;
  result: 'updated' | 'unchanged' | 'not_modified' | 'failed' | 'skipped';
  sourceState: SourceState | null;
  errorCode: string | null;
  message: string | null;
  entityCount: number | null;
  nextRefreshAt: number | null;
  consecutiveFailures: number;
  /**
   * The poller's own bookkeeping (epoch ms, its clock): when the source fell due (its
   * nextRefreshAt; null for an operator's poll), when this poll started and ended, and how
   * late it started (startedAt − dueAt, at least 0; null for an operator's poll).
   */
  dueAt: number | null;
  startedAt: number;
  finishedAt: number;
  latenessMs: number | null;
  /**
   * Where the time went, ms (the bench reports it): the download (the signature pass runs
   * alongside it), the rest of the signature pass after the last byte, the inventory write.
   */
  timings?: { downloadMs: number; verifyMs?: number; writeMs?: number };
}

export const TRUST_SOURCE_SUBJECT = 'federation_trust_source';

interface Payload {
  metadataUrl?: string | null;
  metadataUrlPatterns?: string[];
  policy?: 'strict' | 'warn' | 'disabled';
  polling?: { mode?: string; intervalSeconds?: number };
}

const ENTITY_DELETE_BATCH = 500;

/** A poll's outcome before the scheduling bookkeeping is added. */
type PollResult = Omit<PollOutcome, 'dueAt' | 'startedAt' | 'finishedAt' | 'latenessMs'>;

export class MetadataPoller {
  private readonly lookups: OperationLookups;

  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationStates,
    private readonly opts: PollerOptions,
  ) {
    this.lookups = new OperationLookups(db);
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
      return await this.pollClaimed(scope, src, (f) => (file = f));
    } finally {
      if (file) rmSync(file, { force: true });
    }
  }

  private async pollClaimed(
    scope: TenantScope,
    src: TrustSourceRow,
    setFile: (f: string) => void,
  ): Promise<PollResult> {
    const now = this.now();
    const payload = src.protocol_payload as Payload;
    const interval = src.interval_seconds || payload.polling?.intervalSeconds || 86_400;
    const inv = await scope.federationEntities.inventory(src.id);
    const url = payload.metadataUrl ?? '';
    const subject = { type: TRUST_SOURCE_SUBJECT, id: src.id };
    let httpStatus: number | undefined;
    try {
      if (!url) throw new MetadataError('metadata_url_missing', 'the trust source has no metadataUrl');
      if (payload.metadataUrlPatterns?.length && !urlMatchesPatterns(url, payload.metadataUrlPatterns))
        throw new MetadataError('metadata_url_not_allowed', 'metadataUrl does not match metadataUrlPatterns');
      const dir = join(this.opts.dataDir, 'federation-tmp');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, `${src.id}-${randomBytes(6).toString('hex')}.xml`);
      setFile(file);
      // The validators belong to the copy held; a changed URL, or no copy, fetches in full.
      const sameCopy = inv && src.validator_source_url === url;
      const t0 = performance.now();
      // One deadline for the whole document: the download's total timer starts with the
      // request, and the signature pass (started on the response) gets what is left of it.
      const deadline = t0 + this.opts.totalTimeoutMs;
      // The signature pass runs in a worker fed while the body arrives (and lands on disk).
      let verification: StreamingVerification | undefined;
      let dl;
      try {
        dl = await downloadToFile(
          url,
          file,
          sameCopy ? { etag: src.etag, lastModified: src.last_modified } : {},
          this.downloadPolicy(),
          () =>
            (verification = new StreamingVerification(
              src.certificates.map((c) => c.pem),
              {
                ...this.opts.verify,
                timeoutMs: Math.max(1, Math.min(this.opts.verify.timeoutMs, Math.round(deadline - performance.now()))),
              },
            )),
        );
      } catch (e) {
        verification?.abort();
        throw e;
      }
      if (dl.status !== 'ok') verification?.abort();
      if (dl.status === 'http') {
        httpStatus = dl.httpStatus;
        throw new MetadataError(`metadata_http_${dl.httpStatus}`, `the metadata URL answered HTTP ${dl.httpStatus}`);
      }
      if (dl.status === 'not_modified') {
        if (!inv) throw new MetadataError('metadata_http_304', 'a 304 without a copy held');
        // RFC 9110 §15.4.5: the held copy is still current. Its own validUntil still governs.
        await scope.federationEntities.touchInventory(src.id, now);
        const expired = inv.valid_until !== null && inv.valid_until <= now;
        const next = now + 1000 * refreshAfterSeconds(now, inv.valid_until, inv.cache_duration_seconds, interval);
        const state: SourceState = expired ? 'expired' : 'healthy';
        await this.write(scope, src, {
          last_attempt_at: now,
          last_success_at: now,
          consecutive_failures: 0,
          source_state: state,
          last_error_code: expired ? 'metadata_expired' : null,
          next_refresh_at: next,
        });
        await this.notifyCopy(src.tenant_id, subject, inv.valid_until, now, { failing: false });
        return this.outcome(src, 'not_modified', state, null, null, inv.entity_count, next, 0);
      }
      const t1 = performance.now();
      const verified = await verification!.end();
      const validUntil = parseValidUntil(verified.inventory.validUntil) ?? null;
      const cacheSeconds = parseDuration(verified.inventory.cacheDuration) ?? null;
      if (verified.inventory.validUntil && validUntil === null)
        throw new MetadataError('metadata_valid_until_invalid', 'validUntil is not a date-time');
      if (validUntil !== null && validUntil <= now)
        throw new MetadataError('metadata_expired', 'the document is past its validUntil');
      if ((payload.policy ?? 'strict') === 'strict') {
        if (validUntil === null)
          throw new MetadataError('metadata_valid_until_missing', 'policy strict requires validUntil');
        if (validUntil - now > STRICT_MAX_VALIDITY_SECONDS * 1000)
          throw new MetadataError('metadata_valid_until_too_far', 'policy strict requires validUntil within 14 days');
      }
      const t2 = performance.now();
      let result: PollOutcome['result'] = 'unchanged';
      if (!inv || inv.content_hash !== verified.contentHash || inv.signing_fingerprint !== verified.fingerprint) {
        await this.replaceInventory(
          scope,
          src,
          inv,
          {
            trust_source_id: src.id,
            active_generation: 0,
            valid_until: validUntil,
            cache_duration_seconds: cacheSeconds,
            entity_count: verified.inventory.entities.length,
            signing_fingerprint: verified.fingerprint,
            content_hash: verified.contentHash,
            fetched_at: now,
          },
          verified.inventory.entities,
        );
        result = 'updated';
      } else await scope.federationEntities.touchInventory(src.id, now);
      const next = now + 1000 * refreshAfterSeconds(now, validUntil, cacheSeconds, interval);
      await this.write(scope, src, {
        last_attempt_at: now,
        last_success_at: now,
        consecutive_failures: 0,
        source_state: 'healthy',
        last_error_code: null,
        etag: dl.etag,
        last_modified: dl.lastModified,
        validator_source_url: url,
        accepted_valid_until: validUntil,
        signing_fingerprint: verified.fingerprint,
        snapshot_hash: verified.contentHash,
        next_refresh_at: next,
      });
      await this.notifications.clear(src.tenant_id, 'signing_identity_changed', subject);
      await this.notifyCopy(src.tenant_id, subject, validUntil, now, { failing: false });
      return {
        ...this.outcome(src, result, 'healthy', null, null, verified.inventory.entities.length, next, 0),
        timings: {
          downloadMs: Math.round(t1 - t0),
          verifyMs: Math.round(t2 - t1),
          writeMs: Math.round(performance.now() - t2),
        },
      };
    } catch (e) {
      const code =
        e instanceof MetadataError
          ? e.code
          : e instanceof OutboundError
            ? `metadata_fetch_${e.reason}`
            : 'metadata_poll_failed';
      const message = e instanceof MetadataError || e instanceof OutboundError ? e.message : 'the poll failed';
      const failures = src.consecutive_failures + 1;
      const state = stateAfterFailure({
        code,
        httpStatus,
        hasCopy: !!inv,
        copyValidUntil: inv?.valid_until ?? null,
        now,
      });
      const next = now + 1000 * backoffSeconds(failures, interval);
      await this.write(scope, src, {
        last_attempt_at: now,
        consecutive_failures: failures,
        source_state: state,
        last_error_code: code,
        next_refresh_at: next,
      });
      if (code === 'metadata_signing_key_changed')
        await this.notifications.raise(src.tenant_id, 'signing_identity_changed', subject, {
          pinnedFingerprints: src.certificates.map((c) => c.sha256),
          newFingerprint: (e as MetadataError).details.newFingerprint ?? null,
        });
      if (failures >= REFRESH_FAILING_AFTER)
        await this.notifications.raise(src.tenant_id, 'refresh_failing', subject, {
          consecutiveFailures: failures,
          lastErrorCode: code,
        });
      await this.notifyCopy(src.tenant_id, subject, inv?.valid_until ?? null, now, { failing: true });
      return this.outcome(src, 'failed', state, code, message, inv?.entity_count ?? null, next, failures);
    }
  }

  /** metadata_expiring / metadata_expired for the copy held; refresh_failing cleared on success. */
  private async notifyCopy(
    tenantId: string,
    subject: { type: string; id: string },
    validUntil: number | null,
    now: number,
    o: { failing: boolean },
  ): Promise<void> {
    if (!o.failing) await this.notifications.clear(tenantId, 'refresh_failing', subject);
    if (validUntil === null) {
      await this.notifications.clear(tenantId, 'metadata_expiring', subject);
      await this.notifications.clear(tenantId, 'metadata_expired', subject);
      return;
    }
    const details = { validUntil: new Date(validUntil).toISOString() };
    if (validUntil <= now) {
      await this.notifications.clear(tenantId, 'metadata_expiring', subject);
      await this.notifications.raise(tenantId, 'metadata_expired', subject, details);
    } else {
      await this.notifications.clear(tenantId, 'metadata_expired', subject);
      if (validUntil - now <= EXPIRING_WITHIN_SECONDS * 1000)
        await this.notifications.raise(tenantId, 'metadata_expiring', subject, details);
      else await this.notifications.clear(tenantId, 'metadata_expiring', subject);
    }
  }

  /**
   * Writes the new generation in batches (not live yet), flips the inventory row to it in one
   * statement, then removes every other generation in bounded deletes. A crash before the
   * flip leaves the old copy live and the partial generation as leftovers, deleted by the next
   * write; a crash after it leaves old rows that nothing reads, deleted likewise.
   */
  private async replaceInventory(
    scope: TenantScope,
    src: TrustSourceRow,
    old: InventoryRow | undefined,
    inv: InventoryRow,
    entities: {
      entityId: string;
      roles: string[];
      registrationAuthority: string | null;
      entityCategories: string[];
      entityCategorySupport: string[];
      hideFromDiscovery: boolean;
      sirtfi: boolean;
    }[],
  ): Promise<void> {
    const repo = scope.federationEntities;
    const live = old?.active_generation ?? 0;
    while ((await repo.deleteOtherGenerations(src.id, live, ENTITY_DELETE_BATCH)) > 0) {
      /* leftovers of an interrupted write */
    }
    const generation = Math.max(live, await repo.maxGeneration(src.id)) + 1;
    const rows = entities.map((e) => ({
      entity_hash: createHash('sha256').update(e.entityId).digest('hex'),
      entity_id: e.entityId,
      roles: e.roles,
      registration_authority: e.registrationAuthority,
      entity_categories: e.entityCategories,
      entity_category_support: e.entityCategorySupport,
      hide_from_discovery: e.hideFromDiscovery,
      sirtfi: e.sirtfi,
    }));
    // 1,000 rows per transaction: one commit per chunk instead of per statement, and each
    // transaction short (tens of ms), so other writers are never held behind the whole copy.
    const chunk = 1000;
    for (let i = 0; i < rows.length; i += chunk) {
      const part = rows.slice(i, i + chunk);
      await this.db.transaction((tx) => scope.in(tx).federationEntities.insertEntities(src.id, generation, part));
      await scope.trustSources.renew(src.id, this.opts.holder, this.now() + this.opts.leaseMs);
    }
    await repo.putInventory({ ...inv, active_generation: generation });
    while ((await repo.deleteOtherGenerations(src.id, generation, ENTITY_DELETE_BATCH)) > 0) {
      /* the previous copy, in bounded deletes */
    }
  }

  private async write(scope: TenantScope, src: TrustSourceRow, p: Partial<PollerFields>): Promise<void> {
    await scope.trustSources.writePollerFields(src.id, this.opts.holder, p, true);
  }

  private downloadPolicy(): DownloadPolicy {
    return {
      allowLoopback: this.opts.allowLoopback,
      extraCaPem: this.opts.extraCaPem,
      connectTimeoutMs: this.opts.connectTimeoutMs,
      idleTimeoutMs: this.opts.idleTimeoutMs,
      totalTimeoutMs: this.opts.totalTimeoutMs,
      maxBytes: this.opts.maxBytes,
    };
  }

  private outcome(
    src: TrustSourceRow,
    result: PollOutcome['result'],
    state: SourceState,
    errorCode: string | null,
    message: string | null,
    entityCount: number | null,
    nextRefreshAt: number,
    failures: number,
  ): PollResult {
    return {
      trustSourceId: src.id,
      tenantId: src.tenant_id,
      result,
      sourceState: state,
      errorCode,
      message,
      entityCount,
      nextRefreshAt,
      consecutiveFailures: failures,
    };
  }
}
