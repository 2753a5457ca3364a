/**
 * Platform plugins (docs/plugins.md): the registry's plugins, configured and enabled per
 * platform or per tenant. Every change (config, enable, disable) bumps the config generation in
 * its own transaction, so every daemon's PluginRuntime sees it at its next use. Enabling a
 * plugin that needs setup starts a provisioning operation that the `plugin-provisioning` job
 * advances.
 */
import { newId } from '../../crypto.js';
import type { Database, Db } from '../../db/index.js';
import { ApiError, badRequest, notFound } from '../../errors.js';
import { DEFAULT_OUTBOUND_POLICY, postJson, type OutboundPolicy } from '../../net/outbound.js';
import {
  PLATFORM_SCOPE_KEY,
  PlatformPlugins,
  TenantRepository,
  TenantScope,
  type PluginOperationRow,
} from '../../repositories/index.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import { sanitizedCause } from '../failure.js';
import {
  AUDIT_WEBHOOK_PLUGIN,
  fieldsOf,
  VERIFICATION_DELIVERY,
  type PluginDefinition,
  type PluginField,
} from './registry.js';
import { markPluginWrite, PluginRuntime, webhookHeaders, type EffectivePlugin } from './runtime.js';

export * from './registry.js';
export { PluginRuntime, webhookHeaders, type ConfigSource, type EffectivePlugin } from './runtime.js';

/** The spec's Plugin state result, with the config in force (secrets masked). */
export interface PluginStateResult {
  success: true;
  pluginId: string;
  tenantId: string | null;
  enabled: boolean;
  configSource: string;
  configured: boolean;
  missingRequiredFields: string[];
  /** The config in force, each secret field masked (`••••` and its last 4 characters). */
  config: Record<string, unknown>;
  provisioning?: ProvisioningView;
}

export interface ProvisioningView {
  operationId: string;
  state: string;
  kind: string;
  attempts?: number;
  lastError?: string | null;
  updatedAt?: number;
}

export interface PluginInfo {
  id: string;
  name: string;
  description: string;
  category: string;
  fields: PluginField[];
  /** The provisioning kind when enabling starts one, else null. */
  provisioningKind: string | null;
}

export type PluginDetail = PluginStateResult & { plugin: PluginInfo };

/** Attempts of a provisioning operation before it is `failed`. */
export const PROVISIONING_MAX_ATTEMPTS = 5;
const PROVISIONING_BACKOFF_MS = 1_000;
/** How long a claim on an operation protects it from another daemon. */
const PROVISIONING_CLAIM_MS = 60_000;

/** Masks a secret: never echoed in full (docs/plugins.md). */
export const maskSecret = (v: unknown): string => `••••${String(v).slice(-4)}`;

export class PluginService {
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly ds: Database,
    readonly runtime: PluginRuntime,
    private readonly policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
  ) {}

  /** The registry entry, or 404 `plugin_not_found`. */
  definition(id: string): PluginDefinition {
    const def = this.runtime.definition(id);
    if (!def) throw new ApiError(404, 'plugin_not_found', `Plugin ${id} was not found.`);
    return def;
  }

  info(def: PluginDefinition): PluginInfo {
    return {
      id: def.id,
      name: def.name,
      description: def.description,
      category: def.category,
      fields: fieldsOf(def),
      provisioningKind: def.provisioning?.kind ?? null,
    };
  }

  private async requireTenant(db: Db, tenantId: string | null): Promise<void> {
    if (tenantId !== null && !(await new TenantRepository(db).lifecycle(tenantId)))
      throw notFound(`Tenant ${tenantId}`);
  }

  /**
   * A scope's state as answers show it. A tenant's state that relies on the platform's config
   * shows none of it (no URL, whose query may hold a credential, and no secret's last four
   * characters): `configSource` says the platform configures it, `configured` and
   * `missingRequiredFields` say whether it is complete. The platform's config is read in the
   * platform scope, by a platform admin.
   */
  private state(e: EffectivePlugin, def: PluginDefinition, op?: PluginOperationRow): PluginStateResult {
    const config: Record<string, unknown> = {};
    const platformOwned = e.tenantId !== null && e.configSource === 'platform';
    if (!platformOwned)
      for (const [k, v] of Object.entries(e.config)) config[k] = def.secretFields.includes(k) ? maskSecret(v) : v;
    return {
      success: true,
      pluginId: e.pluginId,
      tenantId: e.tenantId,
      enabled: e.enabled,
      configSource: e.configSource,
      configured: e.configured,
      missingRequiredFields: e.missingRequiredFields,
      config,
      ...(op ? { provisioning: opView(op) } : {}),
    };
  }

  /** Every plugin with its state for a tenant, or for the platform (tenantId null). */
  async list(tenantId: string | null): Promise<{ tenantId: string | null; plugins: PluginDetail[] }> {
    await this.requireTenant(this.ds, tenantId);
    const states = await this.runtime.load(this.ds, tenantId);
    const ops = new PlatformPlugins(this.ds);
    const plugins: PluginDetail[] = [];
    for (const def of this.runtime.definitions) {
      const op = def.provisioning ? await ops.latestOperation(def.id, scopeKey(tenantId)) : undefined;
      plugins.push({ ...this.state(states.get(def.id)!, def, op), plugin: this.info(def) });
    }
    return { tenantId, plugins };
  }

  async get(id: string, tenantId: string | null): Promise<PluginDetail> {
    const def = this.definition(id);
    await this.requireTenant(this.ds, tenantId);
    const e = (await this.runtime.load(this.ds, tenantId)).get(id)!;
    const op = def.provisioning
      ? await new PlatformPlugins(this.ds).latestOperation(id, scopeKey(tenantId))
      : undefined;
    return { ...this.state(e, def, op), plugin: this.info(def) };
  }

  /**
   * Merges `patch` into the scope's stored config: a field given is validated by the plugin's
   * schema and set, `null` removes it, a field left out keeps its value. Required fields may
   * be missing (they are reported, and enabling is refused until they are set), so an operator
   * can fill a config in steps. Unknown fields are refused. Audited with the names of the
   * fields changed, never their values.
   */
  async configure(id: string, tenantId: string | null, patch: Record<string, unknown>, actor: Actor) {
    const def = this.definition(id);
    const removed = Object.keys(patch).filter((k) => patch[k] === null);
    const given = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null));
    const valid = parseInput(def.schema.partial(), given, 'config') as Record<string, unknown>;
    const unknownRemoved = removed.filter((k) => !(k in def.schema.shape));
    if (unknownRemoved.length)
      throw badRequest(`config.${unknownRemoved[0]}: unknown field`, [
        { field: `config.${unknownRemoved[0]}`, message: 'unknown field' },
      ]);
    return this.change(def, tenantId, actor, 'plugin.configure', (current) => {
      const config = { ...current.config, ...valid };
      for (const k of removed) delete config[k];
      return { enabled: current.enabled, config, summary: { set: Object.keys(valid), removed } };
    });
  }

  /** Enables the plugin in the scope: 422 `plugin_config_incomplete` listing every missing field. */
  enable(id: string, tenantId: string | null, actor: Actor): Promise<PluginStateResult> {
    return this.change(this.definition(id), tenantId, actor, 'plugin.enable', (current) => ({
      enabled: true,
      config: current.config,
      summary: {},
    }));
  }

  disable(id: string, tenantId: string | null, actor: Actor): Promise<PluginStateResult> {
    return this.change(this.definition(id), tenantId, actor, 'plugin.disable', (current) => ({
      enabled: false,
      config: current.config,
      summary: {},
    }));
  }

  /**
   * One change of a scope's settings, in one transaction with the generation bump, the audit
   * event and (enable of a plugin that needs setup) its provisioning operation.
   */
  private async change(
    def: PluginDefinition,
    tenantId: string | null,
    actor: Actor,
    action: 'plugin.configure' | 'plugin.enable' | 'plugin.disable',
    apply: (current: { enabled: boolean | null; config: Record<string, unknown> }) => {
      enabled: boolean | null;
      config: Record<string, unknown>;
      summary: Record<string, unknown>;
    },
  ): Promise<PluginStateResult> {
    const key = scopeKey(tenantId);
    const result = await this.ds.transaction(async (tx) => {
      await this.requireTenant(tx, tenantId);
      markPluginWrite(tx);
      const platform = new PlatformPlugins(tx);
      // First: the generation row lock also serialises concurrent plugin changes on MySQL.
      await platform.bumpGeneration();
      const scoped = tenantId === null ? undefined : new TenantScope(tx, tenantId).plugins;
      const row = scoped ? await scoped.get(def.id) : await platform.get(def.id);
      const current = this.runtime.open(row);
      const next = apply(current);
      const plain: Record<string, unknown> = {};
      const secrets: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(next.config)) (def.secretFields.includes(k) ? secrets : plain)[k] = v;
      const now = Date.now();
      const write = {
        pluginId: def.id,
        enabled: next.enabled,
        config: JSON.stringify(plain),
        secretsSealed: this.runtime.seal(def.id, key, secrets),
        now,
      };
      const platformOpened = tenantId === null ? undefined : this.runtime.open(await platform.get(def.id));
      const e = this.runtime.effective(
        def.id,
        tenantId,
        { enabled: next.enabled, config: next.config },
        platformOpened,
      );
      // A tenant relying on the platform's config may not turn on what the platform turned off:
      // the config (its URL, its secrets) is the platform's, and so is withdrawing it.
      if (action === 'plugin.enable' && e.configSource === 'platform' && platformOpened?.enabled === false) {
        throw new ApiError(
          403,
          'plugin_disabled_by_platform',
          `Plugin ${def.id} is disabled by the platform, whose configuration this tenant relies on; ` +
            'configure the plugin for the tenant to enable it on its own configuration.',
          { pluginId: def.id, tenantId },
        );
      }
      if (action === 'plugin.enable' && !e.configured) {
        throw new ApiError(
          422,
          'plugin_config_incomplete',
          `Plugin ${def.id} cannot be enabled: missing required configuration field(s): ` +
            e.missingRequiredFields.join(', '),
          { missingRequiredFields: e.missingRequiredFields, pluginId: def.id, tenantId },
        );
      }
      if (scoped) await scoped.put(write);
      else await platform.put(write);
      let op: PluginOperationRow | undefined;
      if (action !== 'plugin.configure' && def.provisioning) await platform.supersede(def.id, key, now);
      if (action === 'plugin.enable' && def.provisioning) {
        const opId = newId('plop');
        await platform.insertOperation({
          id: opId,
          pluginId: def.id,
          scopeKey: key,
          tenantId,
          kind: def.provisioning.kind,
          now,
        });
        op = await platform.operation(opId);
      }
      await audit(tx, actor, {
        tenantId,
        action,
        targetType: 'plugin',
        targetId: def.id,
        summary: { ...next.summary, scope: tenantId === null ? 'platform' : 'tenant', enabled: e.enabled },
      });
      return { state: this.state(e, def), op };
    });
    if (result.op) this.kick();
    return result.op ? { ...result.state, provisioning: opProvisioning(result.op) } : result.state;
  }

  /** Wakes this process's provisioning job (after a commit that queued an operation). */
  kick(): void {
    for (const fn of this.listeners) fn();
  }

  onKick(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  /**
   * The `plugin-provisioning` job's work on `db` (the jobs connection): claims due operations
   * one-winner and runs each. `verification_delivery`: one signed POST of a verification event
   * to the configured URL; a 2xx makes it `succeeded`, a failure is retried with backoff
   * (1, 2, 4, 8 s) and is `failed` after {@link PROVISIONING_MAX_ATTEMPTS} attempts, with the
   * sanitised cause in `lastError`. Returns how many operations it advanced.
   */
  async advanceProvisioning(db: Database, holder: string, signal?: AbortSignal): Promise<number> {
    const repo = new PlatformPlugins(db);
    const now = Date.now();
    let done = 0;
    for (const id of await repo.dueOperations(now, 20)) {
      if (signal?.aborted) break;
      const token = `${holder}:${newId('c', 6)}`;
      if (!(await repo.claim(id, token, now + PROVISIONING_CLAIM_MS, now))) continue;
      const op = (await repo.operation(id))!;
      let failure: string | null = null;
      try {
        await this.provision(op);
      } catch (e) {
        failure = sanitizedCause(e) || 'failed';
      }
      const at = Date.now();
      const final = failure === null || op.attempts >= PROVISIONING_MAX_ATTEMPTS;
      await repo.finish(
        id,
        token,
        {
          state: failure === null ? 'succeeded' : final ? 'failed' : 'pending',
          lastError: failure,
          nextAttemptAt: final ? at : at + PROVISIONING_BACKOFF_MS * 2 ** (op.attempts - 1),
        },
        at,
      );
      done++;
    }
    return done;
  }

  private async provision(op: PluginOperationRow): Promise<void> {
    if (op.kind !== VERIFICATION_DELIVERY || op.plugin_id !== AUDIT_WEBHOOK_PLUGIN)
      throw new Error(`unknown provisioning kind ${op.kind}`);
    const e = await this.runtime.resolve(op.plugin_id, op.tenant_id);
    if (!e?.configured) throw new Error('the plugin is no longer configured');
    const body = JSON.stringify({
      type: 'iam.plugin.verification',
      operationId: op.id,
      pluginId: op.plugin_id,
      tenantId: op.tenant_id,
      sentAt: new Date().toISOString(),
    });
    await postJson(String(e.config.url), body, webhookHeaders(e.config, body, op.id), this.policy);
  }
}

export const scopeKey = (tenantId: string | null): string => tenantId ?? PLATFORM_SCOPE_KEY;

function opProvisioning(op: PluginOperationRow): ProvisioningView {
  return { operationId: op.id, state: op.state, kind: op.kind };
}

function opView(op: PluginOperationRow): ProvisioningView {
  return { ...opProvisioning(op), attempts: op.attempts, lastError: op.last_error, updatedAt: op.updated_at };
}
