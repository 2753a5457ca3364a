/**
 * The metadata poller's options and outcome (./metadata-poller.ts, ./source-poll.ts): what an
 * operator configures (IAM_FEDERATION_*, IAM_OUTBOUND_*, IAM_DATA_DIR) and what a poll reports.
 */
import type { Config } from '../../config.js';
import type { FederationPollObserver } from '../../metrics.js';
import { DEFAULT_VERIFY_OPTIONS, type VerifyOptions } from './metadata/verifier.js';
import type { SourceState } from './poll-policy.js';

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

/** A poll's outcome before the scheduling bookkeeping is added. */
export type PollResult = Omit<PollOutcome, 'dueAt' | 'startedAt' | 'finishedAt' | 'latenessMs'>;

export const TRUST_SOURCE_SUBJECT = 'federation_trust_source';
