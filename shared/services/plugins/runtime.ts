/**
 * The runtime view of plugin state that the email provider list, the webhook email provider and
 * the audit hook use: per scope, which plugins are enabled and with which config (secrets
 * opened). It is cached per daemon and never stale: every use reads the one-row config
 * generation (a primary-key read) and drops the cache when it changed, so a change committed
 * on any daemon applies at the next use everywhere (docs/plugins.md).
 */
import { createHmac } from 'node:crypto';
import { SecretBox } from '../../crypto.js';
import type { Db } from '../../db/index.js';
import { PLATFORM_SCOPE_KEY, PlatformPlugins, TenantScope, type PluginSettingsRow } from '../../repositories/index.js';
import { fieldsOf, type PluginDefinition } from './registry.js';

export type ConfigSource = 'tenant' | 'platform' | 'none';

/** A plugin's state in force for one scope (a tenant, or the platform when tenantId is null). */
export interface EffectivePlugin {
  pluginId: string;
  tenantId: string | null;
  enabled: boolean;
  configSource: ConfigSource;
  /** The config in force, secrets opened: for the plugin's own use only, never for a response. */
  config: Record<string, unknown>;
  missingRequiredFields: string[];
  configured: boolean;
}

/** A scope's stored settings, opened. */
export interface OpenedSettings {
  enabled: boolean | null;
  config: Record<string, unknown>;
}

/** Transactions that changed plugin state: what they read must not enter the shared cache. */
const writers = new WeakSet<object>();
export function markPluginWrite(tx: object): void {
  writers.add(tx);
}

/** Most scopes kept: a daemon serving many tenants reloads the least recently added. */
const MAX_CACHED_SCOPES = 10_000;

export class PluginRuntime {
  private readonly box: SecretBox;
  private readonly byId: Map<string, PluginDefinition>;
  private generation = -1;
  private readonly cache = new Map<string, Map<string, EffectivePlugin>>();

  constructor(
    private readonly ds: Db,
    secretKey: string,
    readonly definitions: PluginDefinition[],
  ) {
    this.box = new SecretBox(secretKey, 'plugin-config');
    this.byId = new Map(definitions.map((d) => [d.id, d]));
  }

  definition(id: string): PluginDefinition | undefined {
    return this.byId.get(id);
  }

  /** Seals a scope's secret fields, bound to the plugin and the scope (a copied row does not open). */
  seal(pluginId: string, scopeKey: string, secrets: Record<string, unknown>): string | null {
    return Object.keys(secrets).length ? this.box.seal(JSON.stringify(secrets), aad(pluginId, scopeKey)) : null;
  }

  /** A stored row, opened: plain fields and secret fields together. */
  open(row: PluginSettingsRow | undefined): OpenedSettings {
    if (!row) return { enabled: null, config: {} };
    const plain = JSON.parse(row.config) as Record<string, unknown>;
    const secrets = row.secrets_sealed
      ? (JSON.parse(this.box.open(row.secrets_sealed, aad(row.plugin_id, row.scope_key))) as Record<string, unknown>)
      : {};
    return { enabled: row.enabled, config: { ...plain, ...secrets } };
  }

  /**
   * The state in force from a scope's settings and the platform's. A tenant with any config of
   * its own uses it whole, never merged with the platform's: a tenant's URL must never receive
   * the platform's secrets. Enabled: the tenant's decision, else the platform's; but a tenant
   * that relies on the platform's config is disabled while the platform has disabled the
   * plugin, whatever the tenant decided: the platform's URL and secrets are the platform's to
   * withdraw (docs/plugins.md, "Config sources and precedence").
   */
  effective(
    pluginId: string,
    tenantId: string | null,
    own: OpenedSettings | undefined,
    platform: OpenedSettings | undefined,
  ): EffectivePlugin {
    const def = this.byId.get(pluginId)!;
    const has = (s: OpenedSettings | undefined) => !!s && Object.keys(s.config).length > 0;
    let configSource: ConfigSource = 'none';
    let config: Record<string, unknown> = {};
    if (tenantId !== null && has(own)) {
      configSource = 'tenant';
      config = own!.config;
    } else if (has(tenantId === null ? own : platform)) {
      configSource = 'platform';
      config = (tenantId === null ? own : platform)!.config;
    }
    const platformWithdrew = tenantId !== null && configSource === 'platform' && platform?.enabled === false;
    const enabled =
      tenantId === null ? (own?.enabled ?? false) : !platformWithdrew && (own?.enabled ?? platform?.enabled ?? false);
    const missingRequiredFields = fieldsOf(def)
      .filter((f) => f.required && (config[f.name] === undefined || config[f.name] === null))
      .map((f) => f.name);
    return {
      pluginId,
      tenantId,
      enabled: enabled === true,
      configSource,
      config,
      missingRequiredFields,
      configured: missingRequiredFields.length === 0,
    };
  }

  /** Every plugin's state for a scope, read from `db` (a transaction's view included). */
  async load(db: Db, tenantId: string | null): Promise<Map<string, EffectivePlugin>> {
    const platformRows = await new PlatformPlugins(db).list();
    const ownRows = tenantId === null ? platformRows : await new TenantScope(db, tenantId).plugins.list();
    const byPlugin = (rows: PluginSettingsRow[]) => new Map(rows.map((r) => [r.plugin_id, r]));
    const own = byPlugin(ownRows);
    const platform = byPlugin(platformRows);
    const out = new Map<string, EffectivePlugin>();
    for (const def of this.definitions) {
      out.set(def.id, this.effective(def.id, tenantId, this.open(own.get(def.id)), this.open(platform.get(def.id))));
    }
    return out;
  }

  /**
   * A plugin's state in force for a tenant (or the platform), through the cache: one read of the
   * generation, and a reload when it moved. Pass the caller's transaction when there is one (on
   * SQLite a read outside it would wait for it); a transaction that changed plugin state reads
   * its own view and leaves the cache alone, as it may yet roll back.
   */
  async resolve(pluginId: string, tenantId: string | null, db: Db = this.ds): Promise<EffectivePlugin | undefined> {
    if (!this.byId.has(pluginId)) return undefined;
    if (writers.has(db)) return (await this.load(db, tenantId)).get(pluginId);
    const g = await new PlatformPlugins(db).generation();
    if (g !== this.generation) {
      this.cache.clear();
      this.generation = g;
    }
    const key = tenantId ?? PLATFORM_SCOPE_KEY;
    let scope = this.cache.get(key);
    if (!scope) {
      scope = await this.load(db, tenantId);
      // Another use may have seen a newer generation meanwhile: keep only what matches it.
      if (this.generation === g) {
        if (this.cache.size >= MAX_CACHED_SCOPES) this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(key, scope);
      }
    }
    return scope.get(pluginId);
  }
}

const aad = (pluginId: string, scopeKey: string) => `plugin:${pluginId}:${scopeKey}`;

/**
 * Headers of a signed webhook request: `X-IAM-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256
 * of "<t>.<body>">` (the timestamp inside the MAC lets a receiver refuse replays of old
 * deliveries), a delivery id, and a bearer token when one is configured.
 */
export function webhookHeaders(
  config: Record<string, unknown>,
  body: string,
  deliveryId: string,
  now = Date.now(),
): Record<string, string> {
  const t = Math.floor(now / 1000);
  const mac = createHmac('sha256', String(config.signingSecret)).update(`${t}.${body}`).digest('hex');
  return {
    'x-iam-signature': `t=${t},v1=${mac}`,
    'x-iam-delivery-id': deliveryId,
    ...(typeof config.bearerToken === 'string' ? { authorization: `Bearer ${config.bearerToken}` } : {}),
  };
}
