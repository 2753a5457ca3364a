/**
 * The `audit-webhook` plugin: every audit event of a scope where it is enabled and configured
 * goes to a SIEM endpoint, through the outbox (CONVENTIONS "Data"):
 * - {@link AuditWebhookSink} runs inside audit(), in the event's own transaction, and writes a
 *   sealed outbox entry of kind `audit-webhook`: the entry commits with the event or not at all.
 * - {@link AuditWebhookDeliverer} (the `audit-webhook` job) claims due entries one-winner,
 *   groups them by tenant and POSTs them in signed batches (`{"events": [...]}`) to the URL in
 *   force when it sends; a 2xx marks them delivered, anything else retries with backoff, and
 *   after the last attempt they are `failed`. At-least-once: `X-IAM-Delivery-Id` and each
 *   event's `id` let a receiver drop duplicates.
 */
import { newId } from '../../crypto.js';
import type { AuditEvent } from '../../db/entities.js';
import type { Database, Db } from '../../db/index.js';
import { DEFAULT_OUTBOUND_POLICY, postJson, type OutboundPolicy } from '../../net/outbound.js';
import type { AuditSink } from '../audit.js';
import { sanitizedCause } from '../failure.js';
import type { ClaimedOutboxRow, Outbox } from '../outbox.js';
import { AUDIT_WEBHOOK_OUTBOX_KIND, AUDIT_WEBHOOK_PLUGIN } from './registry.js';
import { webhookHeaders, type PluginRuntime } from './runtime.js';

export class AuditWebhookSink implements AuditSink {
  constructor(
    private readonly runtime: PluginRuntime,
    private readonly outbox: Outbox,
  ) {}

  async onEvent(db: Db, event: AuditEvent): Promise<void> {
    // The caller's transaction: on SQLite a read outside it would wait for it to end.
    const e = await this.runtime.resolve(AUDIT_WEBHOOK_PLUGIN, event.tenant_id, db);
    if (!e?.enabled || !e.configured) return;
    await this.outbox.enqueueSealed(db as Parameters<Outbox['enqueueSealed']>[0], {
      tenantId: event.tenant_id,
      kind: AUDIT_WEBHOOK_OUTBOX_KIND,
      payload: event,
    });
    this.outbox.kick();
  }
}

export interface AuditWebhookOptions {
  /** Entries claimed per run. */
  claimLimit: number;
  claimMs: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export const AUDIT_WEBHOOK_DEFAULTS: AuditWebhookOptions = {
  claimLimit: 500,
  claimMs: 60_000,
  maxAttempts: 12,
  backoffBaseMs: 2_000,
  backoffMaxMs: 300_000,
};

const DEFAULT_BATCH = 50;

export class AuditWebhookDeliverer {
  private readonly opts: AuditWebhookOptions;

  constructor(
    private readonly jobsDb: Database,
    private readonly outbox: Outbox,
    private readonly runtime: PluginRuntime,
    private readonly policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
    opts: Partial<AuditWebhookOptions> = {},
  ) {
    this.opts = { ...AUDIT_WEBHOOK_DEFAULTS, ...opts };
  }

  /** One run: claims what is due and delivers it. Returns the number of entries delivered. */
  async drain(holder: string, signal?: AbortSignal): Promise<number> {
    const store = this.outbox.delivery(this.jobsDb);
    const now = Date.now();
    const due = [
      ...(await store.dueIds('sending', now, this.opts.claimLimit, AUDIT_WEBHOOK_OUTBOX_KIND)),
      ...(await store.dueIds('pending', now, this.opts.claimLimit, AUDIT_WEBHOOK_OUTBOX_KIND)),
    ].slice(0, this.opts.claimLimit);
    if (!due.length) return 0;
    const token = `${holder}:${newId('c', 6)}`;
    const rows = await store.claim(due, token, now + this.opts.claimMs, now);
    const byTenant = new Map<string | null, ClaimedOutboxRow[]>();
    for (const r of rows) byTenant.set(r.tenant_id, [...(byTenant.get(r.tenant_id) ?? []), r]);
    let delivered = 0;
    for (const [tenantId, group] of byTenant) {
      if (signal?.aborted) {
        await store.handBack(
          group.map((r) => r.id),
          token,
          Date.now(),
        );
        continue;
      }
      delivered += await this.deliverGroup(tenantId, group, token);
    }
    return delivered;
  }

  private async deliverGroup(tenantId: string | null, rows: ClaimedOutboxRow[], token: string): Promise<number> {
    const store = this.outbox.delivery(this.jobsDb);
    const e = await this.runtime.resolve(AUDIT_WEBHOOK_PLUGIN, tenantId);
    const fail = async (batch: ClaimedOutboxRow[], code: string, cause: string, final = false) => {
      const now = Date.now();
      for (const r of batch) {
        const last = final || r.attempts >= this.opts.maxAttempts;
        await store.recordFailure(
          {
            id: r.id,
            token,
            final: last,
            nextAttemptAt: now + backoff(r.attempts, this.opts.backoffBaseMs, this.opts.backoffMaxMs),
            errorCode: code,
            cause,
          },
          now,
        );
      }
    };
    if (!e?.enabled || !e.configured) {
      // Disabled (or unconfigured) since the event was written: nowhere to send it.
      await fail(rows, 'plugin_disabled', 'the audit-webhook plugin is not enabled and configured here', true);
      return 0;
    }
    const size = typeof e.config.batchSize === 'number' ? e.config.batchSize : DEFAULT_BATCH;
    let delivered = 0;
    for (let i = 0; i < rows.length; i += size) {
      const batch = rows.slice(i, i + size);
      const events: unknown[] = [];
      const sendable: ClaimedOutboxRow[] = [];
      for (const r of batch) {
        try {
          events.push(this.outbox.openSealed(r.id, r.payload_sealed));
          sendable.push(r);
        } catch {
          await fail([r], 'payload_unreadable', 'the sealed payload does not open', true);
        }
      }
      if (!sendable.length) continue;
      const body = JSON.stringify({ type: 'iam.audit_events', tenantId, events });
      try {
        await postJson(String(e.config.url), body, webhookHeaders(e.config, body, sendable[0].id), this.policy);
        await store.recordDelivered(
          AUDIT_WEBHOOK_PLUGIN,
          sendable.map((r) => ({ id: r.id, token })),
          Date.now(),
        );
        delivered += sendable.length;
      } catch (err) {
        await fail(sendable, 'webhook_error', sanitizedCause(err));
      }
    }
    return delivered;
  }
}

/** Exponential backoff with equal jitter, as the mail deliverer's. */
function backoff(attempts: number, base: number, max: number): number {
  const d = Math.min(max, base * 2 ** Math.max(0, attempts - 1));
  return Math.round(d / 2 + Math.random() * (d / 2));
}
