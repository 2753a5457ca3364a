/**
 * The scan that keeps the access tokens of upstream identity links fresh (docs/identity-providers.md,
 * "Keeping upstream tokens fresh"). One code path serves the scheduled job (`runScheduled`, a
 * round robin over the tenants whose configuration is enabled) and the exact manual run
 * (`runTenant`, `iam external-tokens refresh`, whatever `enabled` says).
 *
 * Per link: lease it (one conditional UPDATE: several scanners, on several daemons, call the
 * upstream once per link), re-read it, refresh it at the upstream's token endpoint
 * (RFC 6749 §6), store the sealed tokens and end the lease. `invalid_grant` (RFC 6749 §5.2)
 * re-reads the row first: a refresh token rotated meanwhile by another scanner is not a
 * revoked grant. 429 and 5xx back off with jitter, per link; a circuit per upstream issuer opens
 * after consecutive retryable failures and skips that upstream until a cool-down.
 */
import { createHash } from 'node:crypto';
import { newId } from '../../crypto.js';
import type { Database } from '../../db/index.js';
import { notFound } from '../../errors.js';
import {
  ExternalTokenRefreshRepository,
  TenantRepository,
  TenantScope,
  type RefreshedTokens,
  type RefreshLinkRow,
  type RefreshRunRow,
} from '../../repositories/index.js';
import { configFrom, SETTINGS_SECTION, type ExternalTokenRefreshConfig } from './config.js';

/** What the upstream's token endpoint answered to a refresh_token grant. */
export type UpstreamRefreshResult =
  | { kind: 'ok'; accessToken: string; refreshToken?: string; idToken?: string; expiresIn?: number }
  /** RFC 6749 §5.2 `invalid_grant`: the refresh token is expired, revoked or not this client's. */
  | { kind: 'invalid_grant'; code: string }
  /** 429, 5xx, timeouts and network failures: worth another try later. */
  | { kind: 'retryable'; code: string }
  /** Anything else (another OAuth error, a malformed answer): counted as an error, backed off too. */
  | { kind: 'error'; code: string };

/** A link's identity, for the sealing helper's associated data and the upstream call. */
export interface LinkRef {
  tenantId: string;
  linkId: string;
  providerId: string;
}

/**
 * The external identity-provider bridge: the tenant's upstream providers, as the scan needs
 * them. The composition roots build it from the upstream identity provider services.
 */
export interface UpstreamBridge {
  /** Calls the provider's token endpoint with grant_type=refresh_token. Never throws for an HTTP answer. */
  refresh(link: LinkRef, refreshToken: string): Promise<UpstreamRefreshResult>;
  /** Opens the sealed refresh token (and ID token, if any) of this link. */
  openTokens(
    link: LinkRef,
    row: { refresh_token_sealed: string; id_token_sealed: string | null; key_id: string },
  ): { refreshToken: string; idToken: string | null };
  /** Seals a link's token columns together, under the current key. */
  seal(
    link: LinkRef,
    t: { accessToken: string; refreshToken: string; idToken: string | null; accessExpiresAt: number | null },
  ): RefreshedTokens;
}

export const OUTCOMES = ['refreshed', 'skipped_not_due', 'invalid_grant', 'backoff', 'circuit_open', 'errors'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type OutcomeCounts = Record<Outcome, number>;

export interface RunSummary extends OutcomeCounts {
  id: string;
  trigger: 'scheduled' | 'manual';
  tenants: string[];
  startedAt: number;
  finishedAt: number;
}

export interface ScanOptions {
  /** Who leases links: unique per process (the scheduler's holder id). */
  holder: string;
  /** How long a link lease lasts; longer than one upstream call can take. */
  linkLeaseMs: number;
  /** Backoff after a retryable failure: base × 2^(failures), capped, with jitter (half to full). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Consecutive retryable failures of one upstream issuer that open its circuit. */
  circuitThreshold: number;
  /** How long an open circuit skips its upstream. */
  circuitCooldownMs: number;
  /** How long run records are kept. */
  runRetentionMs: number;
  /** Random in [0, 1): jitter (tests may pin it). */
  random: () => number;
  now: () => number;
}

export const DEFAULT_SCAN_OPTIONS: Omit<ScanOptions, 'holder'> = {
  linkLeaseMs: 60_000,
  backoffBaseMs: 30_000,
  backoffMaxMs: 30 * 60_000,
  circuitThreshold: 5,
  circuitCooldownMs: 5 * 60_000,
  runRetentionMs: 7 * 24 * 3600_000,
  random: Math.random,
  now: Date.now,
};

/** A recorded run, as `iam external-tokens status` shows it. */
export type RunRecord = RefreshRunRow;

export type Progress = (event: { tenantId: string; linkId: string; outcome: Outcome }) => void;

const zero = (): OutcomeCounts => ({
  refreshed: 0,
  skipped_not_due: 0,
  invalid_grant: 0,
  backoff: 0,
  circuit_open: 0,
  errors: 0,
});

/** The lifetime assumed for an upstream access token answered without `expires_in`. */
export const DEFAULT_ACCESS_LIFETIME_S = 3600;

const issuerHash = (iss: string) => createHash('sha256').update(iss).digest('hex');

/** Per run: the circuits read so far (one read per issuer per run). */
type Circuits = Map<string, { failures: number; openUntil: number | null }>;

export class ExternalTokenRefreshService {
  private readonly opts: ScanOptions;

  constructor(
    private readonly ds: Database,
    private readonly bridge: UpstreamBridge,
    opts: Partial<ScanOptions> & { holder: string },
  ) {
    // The link's lease_holder column holds 64 characters; the tail (pid, random) is the unique part.
    this.opts = { ...DEFAULT_SCAN_OPTIONS, ...opts, holder: opts.holder.slice(-64) };
  }

  private platform() {
    return new ExternalTokenRefreshRepository(this.ds);
  }

  private async configOf(tenantId: string): Promise<ExternalTokenRefreshConfig | undefined> {
    const settings = await new TenantRepository(this.ds).settings(tenantId);
    if (settings === undefined) return undefined;
    return configFrom(settings?.[SETTINGS_SECTION]);
  }

  /** Whether the tenant has an active upstream identity provider (the bridge binding). */
  hasBridge = async (tenantId: string): Promise<boolean> =>
    new TenantScope(this.ds, tenantId).linkRefresh.hasActiveProvider();

  /**
   * One scheduled run: from the persisted cursor, the next tenants (round robin, in id order,
   * wrapping once) whose configuration is enabled, as many as the smallest
   * scheduledTenantBatchSize among the tenants picked; each gets one step of its own batchSize.
   * The cursor moves to the last tenant visited, so the next run starts after it and every
   * enabled tenant is visited in turn, whatever the others' backlog.
   */
  async runScheduled(signal?: AbortSignal): Promise<RunSummary | undefined> {
    const started = this.opts.now();
    const repo = this.platform();
    const cursor = await repo.cursor();
    const picked: { id: string; config: ExternalTokenRefreshConfig }[] = [];
    let limit = Infinity;
    let after = cursor;
    let wrapped = cursor === null;
    const seen = new Set<string>();
    outer: for (;;) {
      const page = await repo.tenantsWithProviders(after, 100);
      for (const id of page) {
        if (seen.has(id)) break outer;
        seen.add(id);
        const config = await this.configOf(id);
        if (!config?.enabled) continue;
        picked.push({ id, config });
        limit = Math.min(limit, config.scheduledTenantBatchSize);
        if (picked.length >= limit) break outer;
      }
      if (page.length === 100) {
        after = page[page.length - 1];
        continue;
      }
      if (wrapped) break;
      wrapped = true;
      after = null;
    }
    if (!picked.length) return undefined;
    const counts = zero();
    const circuits: Circuits = new Map();
    for (const t of picked) {
      if (signal?.aborted) break;
      await this.tenantStep(t.id, t.config, counts, circuits, { signal });
    }
    await repo.setCursor(picked[picked.length - 1].id, this.opts.now());
    return this.record(
      'scheduled',
      picked.map((t) => t.id),
      started,
      counts,
      {},
    );
  }

  /**
   * The exact manual run: one tenant (optionally one user), now, with the tenant's threshold
   * and sizes, whether or not scheduled scanning is enabled.
   */
  async runTenant(
    tenantId: string,
    p: { userId?: string; signal?: AbortSignal; progress?: Progress } = {},
  ): Promise<RunSummary> {
    const started = this.opts.now();
    const config = await this.configOf(tenantId);
    if (!config) throw notFound(`Tenant ${tenantId}`);
    const counts = zero();
    // Counted before the step, so a link this run handles is not counted twice.
    if (p.userId) {
      const dueBefore = this.opts.now() + config.refreshThresholdSeconds * 1000;
      counts.skipped_not_due = await new TenantScope(this.ds, tenantId).linkRefresh.countNotDue({
        dueBefore,
        userId: p.userId,
      });
    }
    await this.tenantStep(tenantId, config, counts, new Map(), p);
    return this.record('manual', [tenantId], started, counts, { tenantId, userId: p.userId });
  }

  /** The latest run records, newest first. */
  async recentRuns(limit = 20): Promise<RefreshRunRow[]> {
    return this.platform().runs(limit);
  }

  private async record(
    trigger: 'scheduled' | 'manual',
    tenants: string[],
    startedAt: number,
    counts: OutcomeCounts,
    who: { tenantId?: string; userId?: string },
  ): Promise<RunSummary> {
    const finishedAt = this.opts.now();
    const id = newId('etr');
    const repo = this.platform();
    await repo.insertRun({
      id,
      trigger_kind: trigger,
      tenant_id: who.tenantId ?? null,
      user_id: who.userId ?? null,
      tenants,
      holder: this.opts.holder.slice(0, 200),
      started_at: startedAt,
      finished_at: finishedAt,
      ...counts,
    });
    await repo.pruneRuns(finishedAt - this.opts.runRetentionMs);
    return { id, trigger, tenants, startedAt, finishedAt, ...counts };
  }

  /**
   * One tenant's share of a run: pages of due links, each at most piiShardPageSize rows, until
   * batchSize links have been handled or nothing due is left. A page that left a link in place
   * (its upstream's circuit is open) ends the step, so the same rows are not read again.
   */
  private async tenantStep(
    tenantId: string,
    config: ExternalTokenRefreshConfig,
    counts: OutcomeCounts,
    circuits: Circuits,
    p: { userId?: string; signal?: AbortSignal; progress?: Progress },
  ): Promise<void> {
    const links = new TenantScope(this.ds, tenantId).linkRefresh;
    let handled = 0;
    while (handled < config.batchSize && !p.signal?.aborted) {
      const now = this.opts.now();
      const pageSize = Math.min(config.piiShardPageSize, config.batchSize - handled);
      const page = await links.due({
        dueBefore: now + config.refreshThresholdSeconds * 1000,
        now,
        limit: pageSize,
        userId: p.userId,
      });
      let leftInPlace = false;
      for (const row of page) {
        if (p.signal?.aborted) return;
        const outcome = await this.refreshLink(tenantId, row, config, circuits);
        counts[outcome]++;
        handled++;
        if (outcome === 'circuit_open') leftInPlace = true;
        p.progress?.({ tenantId, linkId: row.id, outcome });
      }
      if (page.length < pageSize || leftInPlace) return;
    }
  }

  private async circuitOf(circuits: Circuits, issuer: string) {
    let c = circuits.get(issuer);
    if (!c) {
      const row = await this.platform().circuit(issuerHash(issuer));
      c = { failures: row?.consecutive_failures ?? 0, openUntil: row?.open_until ?? null };
      circuits.set(issuer, c);
    }
    return c;
  }

  private async circuitResult(circuits: Circuits, issuer: string, ok: boolean): Promise<void> {
    const c = await this.circuitOf(circuits, issuer);
    const now = this.opts.now();
    if (ok) {
      if (c.failures === 0 && c.openUntil === null) return;
      c.failures = 0;
      c.openUntil = null;
    } else {
      c.failures++;
      if (c.failures >= this.opts.circuitThreshold) c.openUntil = now + this.opts.circuitCooldownMs;
    }
    await this.platform().writeCircuit(
      issuerHash(issuer),
      issuer,
      { consecutive_failures: c.failures, open_until: c.openUntil },
      now,
    );
  }

  /** Full jitter on an exponential backoff: half to all of min(max, base × 2^failures). */
  private backoffMs(failures: number): number {
    const ceiling = Math.min(this.opts.backoffMaxMs, this.opts.backoffBaseMs * 2 ** Math.min(failures, 20));
    return Math.floor(ceiling / 2 + (this.opts.random() * ceiling) / 2);
  }

  private async refreshLink(
    tenantId: string,
    candidate: RefreshLinkRow,
    config: ExternalTokenRefreshConfig,
    circuits: Circuits,
  ): Promise<Outcome> {
    const { holder } = this.opts;
    const links = new TenantScope(this.ds, tenantId).linkRefresh;
    const circuit = await this.circuitOf(circuits, candidate.upstream_iss);
    if (circuit.openUntil !== null && circuit.openUntil > this.opts.now()) return 'circuit_open';

    const now = this.opts.now();
    if ((await links.claim(candidate.id, holder, now + this.opts.linkLeaseMs, now)) !== 1) return 'skipped_not_due';
    // Re-read under the lease: another scanner may have refreshed it between our read and claim.
    const row = await links.get(candidate.id);
    const dueBefore = this.opts.now() + config.refreshThresholdSeconds * 1000;
    if (
      !row ||
      row.state !== 'active' ||
      !row.refresh_token_sealed ||
      (row.access_expires_at !== null && row.access_expires_at > dueBefore)
    ) {
      await links.release(candidate.id, holder);
      return 'skipped_not_due';
    }
    const ref: LinkRef = { tenantId, linkId: row.id, providerId: row.provider_id };
    let result: UpstreamRefreshResult;
    let current: { refreshToken: string; idToken: string | null };
    try {
      current = this.bridge.openTokens(ref, {
        refresh_token_sealed: row.refresh_token_sealed,
        id_token_sealed: row.id_token_sealed,
        key_id: row.key_id,
      });
      result = await this.bridge.refresh(ref, current.refreshToken);
    } catch {
      await links.backOff(
        row.id,
        holder,
        this.opts.now() + this.backoffMs(row.refresh_failures),
        'refresh_failed',
        this.opts.now(),
      );
      return 'errors';
    }
    const at = this.opts.now();
    switch (result.kind) {
      case 'ok': {
        // RFC 6749 §6: the server MAY issue a new refresh token; without one the old one stays
        // valid and is kept (sealed again with the new tokens, under the row's one key id).
        const tokens = this.bridge.seal(ref, {
          accessToken: result.accessToken,
          refreshToken: result.refreshToken ?? current.refreshToken,
          idToken: result.idToken ?? current.idToken,
          // RFC 6749 §5.1: expires_in is only RECOMMENDED; without it the token is taken to live
          // DEFAULT_ACCESS_LIFETIME_S, so the link is not refreshed again on every run.
          accessExpiresAt: at + (result.expiresIn ?? DEFAULT_ACCESS_LIFETIME_S) * 1000,
        });
        await links.storeRefreshed(row.id, holder, tokens, at);
        await this.circuitResult(circuits, row.upstream_iss, true);
        return 'refreshed';
      }
      case 'invalid_grant': {
        // The upstream answered, so it is healthy. Re-read first: a refresh token rotated by
        // another scanner since our read means our token was merely superseded.
        await this.circuitResult(circuits, row.upstream_iss, true);
        const again = await links.get(row.id);
        if (!again || again.refresh_token_sealed !== row.refresh_token_sealed) {
          await links.release(row.id, holder);
          return 'skipped_not_due';
        }
        await links.markReauthentication(row.id, holder, row.refresh_token_sealed, 'invalid_grant', at);
        return 'invalid_grant';
      }
      case 'retryable':
        await links.backOff(row.id, holder, at + this.backoffMs(row.refresh_failures), result.code, at);
        await this.circuitResult(circuits, row.upstream_iss, false);
        return 'backoff';
      case 'error':
        await links.backOff(row.id, holder, at + this.backoffMs(row.refresh_failures), result.code, at);
        return 'errors';
    }
  }
}
