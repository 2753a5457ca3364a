/**
 * Shared pieces of `iam mappings`, `iam federation` and `iam notifications`: flag sets and the
 * human-readable views. The commands work on the database directly through the services, as
 * the API does, so the same validation and the same audit events apply.
 */
import { readFileSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { CliFailure } from './base.js';
import { fields, list, time } from './format.js';
import type { StoredProtocolPayload, TrustSourceView } from '../shared/services/federation/trust-sources.js';

export const tenantFlag = Flags.string({ description: 'id of the tenant', required: true });

/** A JSON file the operator names (`-` for stdin is not supported: files only, so errors name them). */
export function readJsonFile(path: string, flag: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliFailure('invalid_request', `--${flag}: cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CliFailure('invalid_request', `--${flag}: ${path} is not JSON: ${(e as Error).message}`);
  }
}

/** `SOURCE=user:FIELD` or `SOURCE=claim:KEY` (the last `=` splits, so SAML OIDs and SCIM paths pass). */
export function parseMapping(value: string): { source: string; targetType: string; target: string } {
  const at = value.lastIndexOf('=');
  const source = value.slice(0, at);
  const [targetType, ...rest] = value.slice(at + 1).split(':');
  const target = rest.join(':');
  if (at <= 0 || !target || (targetType !== 'user' && targetType !== 'claim'))
    throw new CliFailure(
      'invalid_request',
      `--map ${JSON.stringify(value)}: must be SOURCE=user:FIELD or SOURCE=claim:KEY, e.g. mail=user:email`,
    );
  return { source, targetType, target };
}

export function trustSourceLines(v: TrustSourceView): string {
  const p = v.protocolPayload as unknown as StoredProtocolPayload;
  const poll = p.polling as unknown as Record<string, unknown>;
  const rr = p.runtimeResolution;
  return fields([
    ['id', v.id],
    ['sourceKey', v.sourceKey],
    ['displayName', v.displayName],
    ['sourceType', v.sourceType],
    ['lifecycleState', v.lifecycleState],
    ['metadataUrl', p.metadataUrl ?? '-'],
    ['patterns', list(p.metadataUrlPatterns)],
    ['policy', p.policy],
    ['polling', `${String(poll.mode)} every ${String(poll.intervalSeconds)} s`],
    ['sourceState', String(poll.sourceState)],
    ['nextRefreshAt', time(poll.nextRefreshAt as number | undefined)],
    ['lastSuccessAt', time(poll.lastSuccessAt as number | undefined)],
    ['failures', String(poll.consecutiveFailures)],
    ['resolution', `${rr.mode} (${list(rr.roles)}), priority ${rr.priority}`],
    ['certificates', list(v.certificates.map((c) => `sha256:${c.sha256}`))],
    ['updatedAt', `${v.updatedAt} (${time(v.updatedAt)})`],
  ]);
}

/** The operator's flags of a trust source, shared by `federation add` and `federation update`. */
export const trustSourceFlags = {
  name: Flags.string({ description: 'display name' }),
  type: Flags.string({
    description: 'source type',
    options: ['saml_aggregate', 'saml_metadata', 'saml_federation'],
  }),
  lifecycle: Flags.string({ description: 'lifecycle state', options: ['active', 'disabled'] }),
  description: Flags.string({ description: 'free text for operators' }),
  'metadata-url': Flags.string({ description: 'https URL of the SAML metadata' }),
  pattern: Flags.string({
    description: 'allowed metadata URL pattern (repeatable; * matches within a path segment)',
    multiple: true,
  }),
  policy: Flags.string({ description: 'metadata validity policy', options: ['strict', 'warn', 'disabled'] }),
  polling: Flags.string({ description: 'polling mode', options: ['automatic', 'manual'] }),
  interval: Flags.integer({ description: 'polling interval in seconds (900 to 604800)' }),
  resolution: Flags.string({ description: 'runtime resolution mode', options: ['inventory_only', 'automatic'] }),
  role: Flags.string({
    description: 'role resolved at runtime (repeatable)',
    options: ['saml_idp', 'saml_sp'],
    multiple: true,
  }),
  priority: Flags.integer({ description: 'resolution priority, -1000 to 1000 (default 0)' }),
  'idp-mapping-set': Flags.string({ description: 'field-mapping set id for identity providers (fms_…)' }),
  'sp-mapping-set': Flags.string({ description: 'field-mapping set id for service providers (fms_…)' }),
  preset: Flags.string({
    description: 'default attribute preset',
    options: ['basic.v1', 'academic_publisher.v1', 'enterprise_saas.v1', 'research_federation.v1'],
  }),
  'registration-authority': Flags.string({
    description: 'accepted registration authority (repeatable)',
    multiple: true,
  }),
  'entity-category-policy-file': Flags.string({
    description: 'JSON file with entityCategoryPolicy: {"defaultDecision": "allow", "rules": [...]}',
  }),
  'cert-file': Flags.string({
    description: 'PEM file of a pinned metadata signing certificate (repeatable)',
    multiple: true,
  }),
};

type Flagged = { [K in keyof typeof trustSourceFlags]?: unknown };

/**
 * The protocolPayload after applying the flags to `current` (the stored operator part, or
 * empty on add). A PUT replaces protocolPayload as a whole, so an update starts from what is
 * stored and changes only what a flag names.
 */
export function payloadFromFlags(f: Flagged, current: Partial<StoredProtocolPayload> = {}): Record<string, unknown> {
  const polling: Record<string, unknown> = {
    mode: current.polling?.mode ?? 'automatic',
    intervalSeconds: current.polling?.intervalSeconds ?? 3600,
  };
  const rr: Record<string, unknown> = {
    ...(current.runtimeResolution ?? { mode: 'inventory_only', roles: [], priority: 0 }),
  };
  const p: Record<string, unknown> = {
    description: current.description ?? null,
    metadataUrl: current.metadataUrl ?? null,
    metadataUrlPatterns: current.metadataUrlPatterns ?? [],
    policy: current.policy ?? 'strict',
    polling,
    runtimeResolution: rr,
  };
  const set = (target: Record<string, unknown>, key: string, value: unknown) => {
    if (value !== undefined) target[key] = value;
  };
  set(p, 'description', f.description);
  set(p, 'metadataUrl', f['metadata-url']);
  set(p, 'metadataUrlPatterns', f.pattern);
  set(p, 'policy', f.policy);
  set(polling, 'mode', f.polling);
  set(polling, 'intervalSeconds', f.interval);
  set(rr, 'mode', f.resolution);
  set(rr, 'roles', f.role);
  set(rr, 'priority', f.priority);
  set(rr, 'idpFieldMappingSetId', f['idp-mapping-set']);
  set(rr, 'spFieldMappingSetId', f['sp-mapping-set']);
  set(rr, 'defaultAttributePresetId', f.preset);
  set(rr, 'registrationAuthorities', f['registration-authority']);
  if (typeof f['entity-category-policy-file'] === 'string')
    rr.entityCategoryPolicy = readJsonFile(f['entity-category-policy-file'], 'entity-category-policy-file');
  return p;
}

export function certificatesFromFlags(files: unknown): string[] | undefined {
  if (!Array.isArray(files)) return undefined;
  return files.map((file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      throw new CliFailure('invalid_request', `--cert-file: cannot read ${file}: ${(e as Error).message}`);
    }
  });
}
