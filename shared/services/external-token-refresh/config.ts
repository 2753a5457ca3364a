/**
 * A tenant's external token refresh configuration (the interface specification's "External
 * token refresh configuration"), kept in `tenants.settings.externalTokenRefresh`. It steers
 * the scan that keeps the access tokens of upstream identity links fresh (scan.ts). The
 * "bridge binding" is the tenant's upstream identity provider configuration: without an active
 * provider there is nothing to refresh against, and the endpoint answers 503.
 */
import { z } from 'zod';
import type { Database } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { TenantRepository, TenantScope } from '../../repositories/index.js';
import { parseInput } from '../../schemas/validate.js';
import type { Actor } from '../audit.js';
import { updateSettingsSection } from '../tenant-settings.js';

export interface ExternalTokenRefreshConfig {
  /** Proactive scheduled scanning; exact manual runs stay available either way. */
  enabled: boolean;
  /** A link is due when its upstream access token expires within this many seconds. */
  refreshThresholdSeconds: number;
  /** Most links refreshed for this tenant in one run. */
  batchSize: number;
  /** Most tenants one scheduled run visits (the run uses the smallest value among enabled tenants). */
  scheduledTenantBatchSize: number;
  /** Most link (personal data) rows read for this tenant in one refresh step. */
  piiShardPageSize: number;
}

export const BOUNDS = {
  refreshThresholdSeconds: { min: 60, max: 86_400 },
  batchSize: { min: 1, max: 1000 },
  scheduledTenantBatchSize: { min: 1, max: 100 },
  piiShardPageSize: { min: 1, max: 1000 },
} as const;

/** What a tenant that never changed anything gets: scheduled scanning off. */
export const DEFAULT_EXTERNAL_TOKEN_REFRESH_CONFIG: ExternalTokenRefreshConfig = Object.freeze({
  enabled: false,
  refreshThresholdSeconds: 300,
  batchSize: 100,
  scheduledTenantBatchSize: 10,
  piiShardPageSize: 100,
});

export const SETTINGS_SECTION = 'externalTokenRefresh';

export type RuntimeStatus = 'scheduled' | 'manual_only' | 'bridge_unavailable';

const bounded = (name: keyof typeof BOUNDS, describe: string) => {
  const { min, max } = BOUNDS[name];
  return z
    .number({
      error: (iss) =>
        typeof iss.input === 'number' ? `must be a whole number from ${min} to ${max}` : 'must be an integer',
    })
    .int(`must be a whole number from ${min} to ${max}`)
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`)
    .describe(`${describe} (${min} to ${max}).`);
};

/** The PUT body: every field optional; extensible, so unknown fields are tolerated and not stored. */
export const ExternalTokenRefreshInput = z.looseObject({
  enabled: z
    .boolean({ error: 'must be a boolean' })
    .optional()
    .describe('Proactive scheduled scanning; exact manual runs (`iam external-tokens refresh`) stay available.'),
  refreshThresholdSeconds: bounded(
    'refreshThresholdSeconds',
    'Refresh a link whose upstream access token expires within this many seconds',
  ).optional(),
  batchSize: bounded('batchSize', 'Most links refreshed for this tenant in one run').optional(),
  scheduledTenantBatchSize: bounded(
    'scheduledTenantBatchSize',
    'Most tenants one scheduled run visits; a run uses the smallest value among the enabled tenants',
  ).optional(),
  piiShardPageSize: bounded('piiShardPageSize', 'Most link rows read for this tenant in one refresh step').optional(),
});

export const ExternalTokenRefreshConfigView = z.looseObject({
  enabled: z.boolean(),
  refreshThresholdSeconds: z.number().int(),
  batchSize: z.number().int(),
  scheduledTenantBatchSize: z.number().int(),
  piiShardPageSize: z.number().int(),
});

export const ExternalTokenRefreshResult = z.looseObject({
  config: ExternalTokenRefreshConfigView,
  runtime_status: z
    .enum(['scheduled', 'manual_only', 'bridge_unavailable'])
    .describe(
      '`scheduled`: enabled and the scheduled scan visits this tenant; `manual_only`: disabled, only ' +
        '`iam external-tokens refresh` runs; `bridge_unavailable`: no active upstream identity provider.',
    ),
});

const isInt = (v: unknown, min: number, max: number): v is number =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

/** The configuration in force from a stored section; a missing or malformed field takes its default. */
export function configFrom(stored: unknown): ExternalTokenRefreshConfig {
  const d = DEFAULT_EXTERNAL_TOKEN_REFRESH_CONFIG;
  const s = (stored && typeof stored === 'object' ? stored : {}) as Record<string, unknown>;
  const pick = (k: keyof typeof BOUNDS): number => (isInt(s[k], BOUNDS[k].min, BOUNDS[k].max) ? s[k] : d[k]);
  return {
    enabled: typeof s.enabled === 'boolean' ? s.enabled : d.enabled,
    refreshThresholdSeconds: pick('refreshThresholdSeconds'),
    batchSize: pick('batchSize'),
    scheduledTenantBatchSize: pick('scheduledTenantBatchSize'),
    piiShardPageSize: pick('piiShardPageSize'),
  };
}

/** 503 when the tenant has no active upstream identity provider: there is no bridge to forward to. */
export const bridgeUnavailable = (tenantId: string) =>
  new ApiError(
    503,
    'bridge_unavailable',
    `Tenant ${tenantId} has no active upstream identity provider (the external identity-provider bridge binding); ` +
      'register one with `iam idp add` first.',
  );

export class ExternalTokenRefreshSettingsService {
  readonly input = ExternalTokenRefreshInput;

  constructor(private readonly ds: Database) {}

  /** Whether the tenant has an active upstream identity provider: the bridge binding. */
  hasBridge(tenantId: string): Promise<boolean> {
    return new TenantScope(this.ds, tenantId).linkRefresh.hasActiveProvider();
  }

  /** The configuration in force, or undefined when the tenant does not exist. */
  async forTenant(tenantId: string): Promise<ExternalTokenRefreshConfig | undefined> {
    const settings = await new TenantRepository(this.ds).settings(tenantId);
    if (settings === undefined) return undefined;
    return configFrom(settings?.[SETTINGS_SECTION]);
  }

  private async status(tenantId: string, config: ExternalTokenRefreshConfig): Promise<RuntimeStatus> {
    if (!(await this.hasBridge(tenantId))) return 'bridge_unavailable';
    return config.enabled ? 'scheduled' : 'manual_only';
  }

  /** GET: the configuration in force and what the scan does with it; answers without a bridge too. */
  async get(tenantId: string): Promise<{ config: ExternalTokenRefreshConfig; runtime_status: RuntimeStatus }> {
    const config = await this.forTenant(tenantId);
    if (!config) throw notFound(`Tenant ${tenantId}`);
    return { config, runtime_status: await this.status(tenantId, config) };
  }

  /**
   * PUT: validates (400 naming the field), checks the bridge binding (503 without one, nothing
   * stored), then merges with the stored section, stores and audits in one transaction.
   */
  async update(
    tenantId: string,
    raw: unknown,
    actor: Actor,
  ): Promise<{ config: ExternalTokenRefreshConfig; runtime_status: RuntimeStatus }> {
    const input = parseInput(this.input, raw, 'body');
    if (!(await new TenantRepository(this.ds).lifecycle(tenantId))) throw notFound(`Tenant ${tenantId}`);
    if (!(await this.hasBridge(tenantId))) throw bridgeUnavailable(tenantId);
    const config = await updateSettingsSection(
      this.ds,
      { tenantId, section: SETTINGS_SECTION, action: 'tenant.external_token_refresh_config.update', actor },
      (doc) => {
        const before = configFrom(doc[SETTINGS_SECTION]);
        const after: ExternalTokenRefreshConfig = {
          enabled: input.enabled ?? before.enabled,
          refreshThresholdSeconds: input.refreshThresholdSeconds ?? before.refreshThresholdSeconds,
          batchSize: input.batchSize ?? before.batchSize,
          scheduledTenantBatchSize: input.scheduledTenantBatchSize ?? before.scheduledTenantBatchSize,
          piiShardPageSize: input.piiShardPageSize ?? before.piiShardPageSize,
        };
        return { before, after };
      },
    );
    return { config, runtime_status: config.enabled ? 'scheduled' : 'manual_only' };
  }
}
