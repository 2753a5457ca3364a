/**
 * How a federation trust source is shown and what its stored payload holds (docs/federation.md):
 * the record of the interface specification, the metadataUrlPatterns match and the pinned
 * certificate parse, shared by the service (./trust-sources.ts) and the poller.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { badRequest, type ApiError, type FieldIssue } from '../../errors.js';
import type { PinnedCertificate, TrustSourceRow } from '../../repositories/index.js';

/** The record of the interface specification ("Federation trust source"). */
export interface TrustSourceView {
  id: string;
  tenantId: string;
  sourceType: string;
  sourceKey: string;
  displayName: string;
  lifecycleState: string;
  protocolPayload: Record<string, unknown>;
  certificates: PinnedCertificate[];
  createdAt: number;
  updatedAt: number;
  snapshotHash?: string;
}

/** The stored operator part of protocolPayload (what `protocol_payload` holds). */
export interface StoredProtocolPayload {
  description: string | null;
  metadataUrl: string | null;
  metadataUrlPatterns: string[];
  policy: 'strict' | 'warn' | 'disabled';
  polling: { mode: 'automatic' | 'manual'; intervalSeconds: number };
  runtimeResolution: StoredRuntimeResolution;
}

export interface StoredRuntimeResolution {
  mode: 'inventory_only' | 'automatic';
  roles: ('saml_idp' | 'saml_sp')[];
  priority: number;
  idpFieldMappingSetId?: string;
  spFieldMappingSetId?: string;
  defaultAttributePresetId?: string;
  registrationAuthorities?: string[];
  entityCategoryPolicy?: {
    defaultDecision: 'allow' | 'deny';
    rules: { entityCategory: string; decision: 'allow' | 'deny'; attributePresetId?: string }[];
  };
}

/** What a source created without runtimeResolution gets: its entities are kept, never used to sign in. */
export const DEFAULT_RESOLUTION: StoredRuntimeResolution = { mode: 'inventory_only', roles: [], priority: 0 };

export const fail = (field: string, message: string): ApiError =>
  badRequest(`${field}: ${message}`, [{ field, message }] satisfies FieldIssue[]);

/**
 * Whether `url` matches one of `patterns`. A pattern is a whole https URL in which `*` stands
 * for any run of characters other than `/`, `?` and `#` within one path segment or host label
 * group (e.g. `https://mds.example.org/*.xml`); `**` stands for any run of characters at all.
 * Everything else compares literally, so a pattern cannot be widened by dots or slashes.
 */
export function urlMatchesPatterns(url: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    const re = p
      .split('**')
      .map((part) =>
        part
          .split('*')
          .map((lit) => lit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/?#]*'),
      )
      .join('.*');
    return new RegExp(`^${re}$`).test(url);
  });
}

/** Parses a pinned certificate (PEM); throws 400 naming `field` when it is not one. */
export function pinCertificate(pem: string, field: string): PinnedCertificate {
  const trimmed = pem.trim();
  // Exactly one block: X509Certificate would read the first of several and drop the rest unseen.
  if (
    !/^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----$/.test(trimmed) ||
    trimmed.split('-----BEGIN CERTIFICATE-----').length !== 2
  )
    throw fail(field, 'must be one PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(trimmed);
  } catch {
    throw fail(field, 'is not a parseable X.509 certificate');
  }
  return {
    pem: cert.toString().trim(),
    sha256: createHash('sha256').update(cert.raw).digest('hex'),
    subject: cert.subject.replace(/\n/g, ', '),
    notAfter: new Date(cert.validTo).toISOString(),
  };
}

/** The stored row as the specification's record: poller fields shown inside protocolPayload.polling. */
export function trustSourceView(r: TrustSourceRow): TrustSourceView {
  const stored = r.protocol_payload as unknown as StoredProtocolPayload;
  const polling: Record<string, unknown> = { mode: r.polling_mode, intervalSeconds: r.interval_seconds };
  const put = (k: string, v: unknown) => {
    if (v !== null && v !== undefined) polling[k] = v;
  };
  put('nextRefreshAt', r.next_refresh_at);
  put('lastAttemptAt', r.last_attempt_at);
  put('lastSuccessAt', r.last_success_at);
  polling.consecutiveFailures = r.consecutive_failures;
  // A source with no accepted copy yet is `missing`: nothing of it resolves.
  polling.sourceState = r.source_state ?? 'missing';
  put('lastErrorCode', r.last_error_code);
  put('etag', r.etag);
  put('lastModified', r.last_modified);
  put('validatorSourceUrl', r.validator_source_url);
  put('acceptedValidUntil', r.accepted_valid_until === null ? null : new Date(r.accepted_valid_until).toISOString());
  polling.suspendedByMetadataSync = r.suspended_by_metadata_sync;
  put('signingFingerprint', r.signing_fingerprint);
  const v: TrustSourceView = {
    id: r.id,
    tenantId: r.tenant_id,
    sourceType: r.source_type,
    sourceKey: r.source_key,
    displayName: r.display_name,
    lifecycleState: r.lifecycle_state,
    protocolPayload: {
      description: stored.description ?? null,
      metadataUrl: stored.metadataUrl ?? null,
      metadataUrlPatterns: stored.metadataUrlPatterns ?? [],
      policy: stored.policy ?? 'strict',
      polling,
      runtimeResolution: stored.runtimeResolution ?? DEFAULT_RESOLUTION,
    },
    certificates: r.certificates,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  if (r.snapshot_hash) v.snapshotHash = r.snapshot_hash;
  return v;
}
