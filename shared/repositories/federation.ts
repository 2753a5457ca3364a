/**
 * SAML federation trust sources of one tenant (migration 0020, docs/federation.md), with the
 * columns the metadata poller maintains. Reached through the tenant's scope; the poller finds
 * due sources of every tenant through OperationLookups.dueTrustSources and then works through
 * each source's tenant scope.
 *
 * The poller's writes are conditional on its lease (`lease_holder = ?`): a poller that lost the
 * lease changes nothing and sees 0 rows changed. An operator update clears the lease with the
 * other poller columns, so a poll that was under way when the source changed writes nothing.
 *
 * The source profiles and field-mapping sets a source refers to are in field-mapping.ts.
 */
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;
const s = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);
const n = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

/** A pinned signing certificate of a trust source. */
export interface PinnedCertificate {
  pem: string;
  /** SHA-256 of the DER certificate, lowercase hex. */
  sha256: string;
  subject?: string;
  notAfter?: string;
}

/** The columns the metadata poller maintains; all reset by an operator update. */
export interface PollerFields {
  snapshot_hash: string | null;
  next_refresh_at: number | null;
  last_attempt_at: number | null;
  last_success_at: number | null;
  consecutive_failures: number;
  source_state: string | null;
  last_error_code: string | null;
  etag: string | null;
  last_modified: string | null;
  validator_source_url: string | null;
  /** Epoch milliseconds (shown as a date-time string). */
  accepted_valid_until: number | null;
  suspended_by_metadata_sync: boolean;
  /** SHA-256 (lowercase hex) of the certificate that verified the last good copy. */
  signing_fingerprint: string | null;
}

export interface TrustSourceRow extends PollerFields {
  id: string;
  tenant_id: string;
  source_type: string;
  source_key: string;
  display_name: string;
  lifecycle_state: string;
  /**
   * The operator's part of protocolPayload: description, metadataUrl, metadataUrlPatterns, policy,
   * polling mode and interval, runtimeResolution.
   */
  protocol_payload: Record<string, unknown>;
  certificates: PinnedCertificate[];
  polling_mode: string;
  interval_seconds: number;
  idp_mapping_set_id: string | null;
  sp_mapping_set_id: string | null;
  lease_holder: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
}

/** What an operator sets: everything that is not the poller's. */
export type TrustSourceOperatorFields = Pick<
  TrustSourceRow,
  | 'source_type'
  | 'source_key'
  | 'display_name'
  | 'lifecycle_state'
  | 'protocol_payload'
  | 'certificates'
  | 'polling_mode'
  | 'interval_seconds'
  | 'idp_mapping_set_id'
  | 'sp_mapping_set_id'
>;

/** The poller columns of a source that was never polled, and after each operator update. */
export const FRESH_POLLER_FIELDS: Readonly<PollerFields> = Object.freeze({
  snapshot_hash: null,
  next_refresh_at: null,
  last_attempt_at: null,
  last_success_at: null,
  consecutive_failures: 0,
  source_state: null,
  last_error_code: null,
  etag: null,
  last_modified: null,
  validator_source_url: null,
  accepted_valid_until: null,
  suspended_by_metadata_sync: false,
  signing_fingerprint: null,
});

const POLLER_COLS = [
  'snapshot_hash',
  'next_refresh_at',
  'last_attempt_at',
  'last_success_at',
  'consecutive_failures',
  'source_state',
  'last_error_code',
  'etag',
  'last_modified',
  'validator_source_url',
  'accepted_valid_until',
  'suspended_by_metadata_sync',
  'signing_fingerprint',
] as const satisfies readonly (keyof PollerFields)[];

const SOURCE_COLS = `id, tenant_id, source_type, source_key, display_name, lifecycle_state, protocol_payload,
  certificates, polling_mode, interval_seconds, idp_mapping_set_id, sp_mapping_set_id, ${POLLER_COLS.join(', ')},
  lease_holder, lease_until, created_at, updated_at`;

const toSource = (r: Row): TrustSourceRow => ({
  id: String(r.id),
  tenant_id: String(r.tenant_id),
  source_type: String(r.source_type),
  source_key: String(r.source_key),
  display_name: String(r.display_name),
  lifecycle_state: String(r.lifecycle_state),
  protocol_payload: json<Record<string, unknown>>(r.protocol_payload),
  certificates: json<PinnedCertificate[]>(r.certificates),
  polling_mode: String(r.polling_mode),
  interval_seconds: num(r.interval_seconds),
  idp_mapping_set_id: s(r.idp_mapping_set_id),
  sp_mapping_set_id: s(r.sp_mapping_set_id),
  snapshot_hash: s(r.snapshot_hash),
  next_refresh_at: n(r.next_refresh_at),
  last_attempt_at: n(r.last_attempt_at),
  last_success_at: n(r.last_success_at),
  consecutive_failures: num(r.consecutive_failures),
  source_state: s(r.source_state),
  last_error_code: s(r.last_error_code),
  etag: s(r.etag),
  last_modified: s(r.last_modified),
  validator_source_url: s(r.validator_source_url),
  accepted_valid_until: n(r.accepted_valid_until),
  suspended_by_metadata_sync: Number(r.suspended_by_metadata_sync) === 1,
  signing_fingerprint: s(r.signing_fingerprint),
  lease_holder: s(r.lease_holder),
  lease_until: n(r.lease_until),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

const bindPoller = (p: Partial<PollerFields>, key: keyof PollerFields): unknown => {
  const v = p[key];
  return key === 'suspended_by_metadata_sync' ? (v ? 1 : 0) : v;
};

export class ScopedTrustSources {
  constructor(private readonly sc: ScopeRef) {}

  /** Inserts a source with fresh poller columns and no lease. */
  async insert(id: string, f: TrustSourceOperatorFields, nextRefreshAt: number | null, now: number): Promise<void> {
    const poller: PollerFields = { ...FRESH_POLLER_FIELDS, next_refresh_at: nextRefreshAt };
    await exec(
      this.sc.db,
      `INSERT INTO federation_trust_sources (${SOURCE_COLS})
       VALUES (${new Array(16 + POLLER_COLS.length).fill('?').join(', ')})`,
      [
        id,
        this.sc.tenantId,
        f.source_type,
        f.source_key,
        f.display_name,
        f.lifecycle_state,
        JSON.stringify(f.protocol_payload),
        JSON.stringify(f.certificates),
        f.polling_mode,
        f.interval_seconds,
        f.idp_mapping_set_id,
        f.sp_mapping_set_id,
        ...POLLER_COLS.map((c) => bindPoller(poller, c)),
        null,
        null,
        now,
        now,
      ],
    );
  }

  async get(id: string): Promise<TrustSourceRow | undefined> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT ${SOURCE_COLS} FROM federation_trust_sources WHERE tenant_id = ? AND id = ?`,
      [this.sc.tenantId, id],
    );
    return r ? toSource(r) : undefined;
  }

  async byKey(sourceKey: string): Promise<TrustSourceRow | undefined> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT ${SOURCE_COLS} FROM federation_trust_sources WHERE tenant_id = ? AND source_key = ?`,
      [this.sc.tenantId, sourceKey],
    );
    return r ? toSource(r) : undefined;
  }

  async list(limit: number, offset: number): Promise<TrustSourceRow[]> {
    const rows = await all<Row>(
      this.sc.db,
      `SELECT ${SOURCE_COLS} FROM federation_trust_sources WHERE tenant_id = ?
        ORDER BY created_at, id LIMIT ? OFFSET ?`,
      [this.sc.tenantId, limit, offset],
    );
    return rows.map(toSource);
  }

  /** Every source of the tenant whose runtime resolution may use it (the resolver's candidates). */
  async listAll(): Promise<TrustSourceRow[]> {
    const rows = await all<Row>(
      this.sc.db,
      `SELECT ${SOURCE_COLS} FROM federation_trust_sources WHERE tenant_id = ? ORDER BY created_at, id`,
      [this.sc.tenantId],
    );
    return rows.map(toSource);
  }

  /** Sources of the tenant with automatic polling, `exceptId` left out (the per-tenant cap). */
  async countAutomatic(exceptId?: string): Promise<number> {
    const r = await one<{ n: unknown }>(
      this.sc.db,
      `SELECT COUNT(*) AS n FROM federation_trust_sources
        WHERE tenant_id = ? AND polling_mode = 'automatic' AND id <> ?`,
      [this.sc.tenantId, exceptId ?? ''],
    );
    return num(r?.n ?? 0);
  }

  /** Ids and keys of the sources that name a field-mapping set (either role). */
  async referencingSet(setId: string): Promise<{ id: string; source_key: string }[]> {
    return all<{ id: string; source_key: string }>(
      this.sc.db,
      `SELECT id, source_key FROM federation_trust_sources
        WHERE tenant_id = ? AND (idp_mapping_set_id = ? OR sp_mapping_set_id = ?) ORDER BY source_key`,
      [this.sc.tenantId, setId, setId],
    );
  }

  /**
   * An operator update: replaces the operator's fields and resets every poller column and the
   * lease, conditional on `expectedUpdatedAt` (optimistic concurrency). Returns rows changed:
   * 0 when the source is gone or was changed since.
   */
  async update(
    id: string,
    f: TrustSourceOperatorFields,
    expectedUpdatedAt: number,
    nextRefreshAt: number | null,
    now: number,
  ): Promise<number> {
    const poller: PollerFields = { ...FRESH_POLLER_FIELDS, next_refresh_at: nextRefreshAt };
    return exec(
      this.sc.db,
      `UPDATE federation_trust_sources SET source_type = ?, source_key = ?, display_name = ?, lifecycle_state = ?,
        protocol_payload = ?, certificates = ?, polling_mode = ?, interval_seconds = ?, idp_mapping_set_id = ?,
        sp_mapping_set_id = ?, ${POLLER_COLS.map((c) => `${c} = ?`).join(', ')}, lease_holder = NULL,
        lease_until = NULL, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND updated_at = ?`,
      [
        f.source_type,
        f.source_key,
        f.display_name,
        f.lifecycle_state,
        JSON.stringify(f.protocol_payload),
        JSON.stringify(f.certificates),
        f.polling_mode,
        f.interval_seconds,
        f.idp_mapping_set_id,
        f.sp_mapping_set_id,
        ...POLLER_COLS.map((c) => bindPoller(poller, c)),
        now,
        this.sc.tenantId,
        id,
        expectedUpdatedAt,
      ],
    );
  }

  // ---- the poller's lease and writes --------------------------------------------------------

  /**
   * Claims the source for `holder` until `leaseUntil` when nobody holds a live lease (one
   * winner). `force` claims it whatever its next_refresh_at (a manual refresh); otherwise only
   * when it is due.
   */
  async claim(id: string, holder: string, leaseUntil: number, now: number, force = false): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE federation_trust_sources SET lease_holder = ?, lease_until = ?
        WHERE tenant_id = ? AND id = ? AND (lease_until IS NULL OR lease_until < ?)${
          force ? '' : ' AND next_refresh_at IS NOT NULL AND next_refresh_at <= ?'
        }`,
      force ? [holder, leaseUntil, this.sc.tenantId, id, now] : [holder, leaseUntil, this.sc.tenantId, id, now, now],
    );
  }

  /** Extends a held lease. */
  async renew(id: string, holder: string, leaseUntil: number): Promise<number> {
    return exec(
      this.sc.db,
      'UPDATE federation_trust_sources SET lease_until = ? WHERE tenant_id = ? AND id = ? AND lease_holder = ?',
      [leaseUntil, this.sc.tenantId, id, holder],
    );
  }

  /**
   * Writes poller columns under the lease, and releases it when `release`. Does not touch
   * updated_at: that is the operator's revision (expectedUpdatedAt), which a poll must not
   * invalidate.
   */
  async writePollerFields(id: string, holder: string, p: Partial<PollerFields>, release: boolean): Promise<number> {
    const keys = POLLER_COLS.filter((c) => c in p);
    const sets = keys.map((c) => `${c} = ?`);
    if (release) sets.push('lease_holder = NULL', 'lease_until = NULL');
    if (sets.length === 0) return 0;
    return exec(
      this.sc.db,
      `UPDATE federation_trust_sources SET ${sets.join(', ')} WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [...keys.map((c) => bindPoller(p, c)), this.sc.tenantId, id, holder],
    );
  }
}
