/**
 * What each provisioning step does. A check runs between two short transactions of the runner
 * (no transaction is held across an SMTP dialogue or key generation) and either returns what it
 * observed or throws a StepFailure with the step's stable error code (docs/provisioning.md).
 * Activation, the last step, is a write: it runs inside the transaction that records the step.
 */
import { migrations } from '../../../migrations/index.js';
import type { JsonObject } from '../../db/entities.js';
import type { Database, Tx } from '../../db/index.js';
import { ServiceMetaRepository, TenantRepository, type ProvisioningOperationRow } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import type { KeyService } from '../keys.js';
import type { EmailProviders } from '../mail/index.js';
import { MAIL_VERIFY_TIMEOUT_MS, type StepKey } from './state-machine.js';

/** A step's check failed; `code` is its stable error code, `cause` the error behind it, if any. */
/**
 * Tenant states in which provisioning pauses: a tenant suspended while being provisioned (an
 * operator's move, docs/tenant-lifecycle.md), or under disaster recovery after that. The runner
 * neither works nor activates it; the operation waits, nothing counted, until the tenant is
 * `provisioning` again (resume).
 */
export const PAUSED_STATES: ReadonlySet<string> = new Set(['suspended', 'recovering']);

/** The tenant is in a PAUSED_STATES state: hand the operation back without counting an attempt. */
export class ProvisioningPaused extends Error {
  constructor(readonly lifecycleState: string) {
    super(`tenant is ${lifecycleState}; provisioning paused`);
  }
}

export class StepFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StepFailure';
  }
}

/** What a step's check found, recorded on its row when it completes. */
export interface StepOutcome {
  observed?: string | null;
  progress?: { current: number; total: number };
  /** Merged into the operation's `preparation_result`. */
  prepared?: JsonObject;
}

/** Who advances operations, in the audit log and the history. */
export const RUNNER_ACTOR: Actor = { type: 'system', id: 'provisioning' };

export class ProvisioningEffects {
  constructor(
    private readonly db: Database,
    private readonly keys: KeyService,
    private readonly mail: EmailProviders,
  ) {}

  /** Runs the check of step `key` for `op`. */
  async check(key: StepKey, op: ProvisioningOperationRow): Promise<StepOutcome> {
    switch (key) {
      case 'request_accepted':
        return this.requestAccepted(op);
      case 'schema_verified':
        return this.schemaVerified();
      case 'signing_key_ready':
        return this.signingKeyReady();
      case 'mail_transport_verified':
        return this.mailTransportVerified(op.tenant_id);
      case 'tenant_activated':
        // Done by activate(), in the transaction that records the step.
        return {};
    }
  }

  /** The input was recorded with the tenant in one transaction; check that both are there. */
  private async requestAccepted(op: ProvisioningOperationRow): Promise<StepOutcome> {
    const t = await new TenantRepository(this.db).lifecycle(op.tenant_id);
    if (!t) throw new StepFailure('tenant_missing', `tenant ${op.tenant_id} does not exist`);
    JSON.parse(op.input_json);
    return { observed: op.tenant_id };
  }

  /** The same test as `iam` runs before every command, with a count for progress. */
  private async schemaVerified(): Promise<StepOutcome> {
    const known = migrations.map((m) => new m().name ?? m.name);
    let applied: Set<string>;
    try {
      applied = new Set(await new ServiceMetaRepository(this.db).appliedMigrations());
    } catch (e) {
      throw new StepFailure('schema_not_current', `cannot read the applied migrations: ${(e as Error).message}`, {
        cause: e,
      });
    }
    const done = known.filter((n) => applied.has(n)).length;
    if (done < known.length) {
      throw new StepFailure(
        'schema_not_current',
        `${known.length - done} of ${known.length} migrations are not applied: run \`iam db migrate\``,
      );
    }
    return {
      observed: known[known.length - 1],
      progress: { current: done, total: known.length },
      prepared: { schema_migrations: known.length },
    };
  }

  /**
   * Tokens for the tenant's users are signed with the service's active key: make sure there is
   * one, and that it opens with this IAM_SECRET_KEY.
   */
  private async signingKeyReady(): Promise<StepOutcome> {
    try {
      await this.keys.ensureActive();
      const { kid, alg } = await this.keys.signingKey();
      return { observed: kid, prepared: { signing_key_kid: kid, signing_key_alg: alg } };
    } catch (e) {
      throw new StepFailure('signing_key_unavailable', (e as Error).message, { cause: e });
    }
  }

  /** Users sign in with a code sent by email: the tenant's first mail provider must answer. */
  private async mailTransportVerified(tenantId: string): Promise<StepOutcome> {
    let settings: JsonObject | null = null;
    try {
      settings = (await new TenantRepository(this.db).settings(tenantId)) ?? null;
    } catch (e) {
      // Unreadable settings: the default order.
      if (!(e instanceof SyntaxError)) throw e;
    }
    try {
      const provider = await this.mail.verifyPrimary(settings, MAIL_VERIFY_TIMEOUT_MS);
      return { observed: provider, prepared: { mail_provider: provider } };
    } catch (e) {
      throw new StepFailure('mail_transport_unreachable', (e as Error).message, { cause: e });
    }
  }

  /**
   * `provisioning` → `active`, one winner, audited. A tenant suspended meanwhile pauses the
   * operation (ProvisioningPaused: nothing is counted); any other state fails the step.
   */
  async activate(tx: Tx, tenantId: string, operationId: string, now: number): Promise<void> {
    const tenants = new TenantRepository(tx);
    if ((await tenants.moveLifecycle(tenantId, { from: 'provisioning', to: 'active', now })) !== 1) {
      const t = await tenants.lifecycle(tenantId);
      if (t && PAUSED_STATES.has(t.lifecycle_state)) throw new ProvisioningPaused(t.lifecycle_state);
      throw new StepFailure(
        'tenant_not_provisioning',
        `the tenant is ${t?.lifecycle_state ?? 'missing'}, not provisioning`,
      );
    }
    await audit(tx, RUNNER_ACTOR, {
      tenantId,
      action: 'tenant.activate',
      targetType: 'tenant',
      targetId: tenantId,
      summary: {
        operation_id: operationId,
        before: { lifecycle_state: 'provisioning' },
        after: { lifecycle_state: 'active', updated_at: now },
      },
    });
  }
}
