/**
 * One trust source's poll, once ./metadata-poller.ts has claimed its lease (steps 2 to 6 there):
 * the conditional download through the outbound client, the streaming signature pass, the
 * validity policy, the inventory's generation flip, the poller fields and the notifications.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '../../db/index.js';
import { downloadToFile, type DownloadPolicy } from '../../net/outbound-download.js';
import { OutboundError } from '../../net/outbound.js';
import type { TenantScope } from '../../repositories/index.js';
import type { InventoryRow } from '../../repositories/federation-entities.js';
import type { PollerFields, TrustSourceRow } from '../../repositories/federation.js';
import type { NotificationStates } from '../notification-states.js';
import { MetadataError } from './metadata/scan.js';
import { StreamingVerification } from './metadata/verifier.js';
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
import { TRUST_SOURCE_SUBJECT, type PollerOptions, type PollOutcome, type PollResult } from './poller-options.js';
import { urlMatchesPatterns } from './trust-source-view.js';

interface Payload {
  metadataUrl?: string | null;
  metadataUrlPatterns?: string[];
  policy?: 'strict' | 'warn' | 'disabled';
  polling?: { mode?: string; intervalSeconds?: number };
}

const ENTITY_DELETE_BATCH = 500;

export class SourcePoll {
  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationStates,
    private readonly opts: PollerOptions,
    private readonly now: () => number,
  ) {}

  /** Polls the claimed source `src`; `setFile` learns the temp file, which the caller removes. */
  async run(scope: TenantScope, src: TrustSourceRow, setFile: (f: string) => void): Promise<PollResult> {
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
