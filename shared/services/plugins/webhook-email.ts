/**
 * The `webhook-email` plugin as an email notifier provider: each message is POSTed as signed
 * JSON to the HTTPS URL configured for the tenant (or the platform), through the SSRF-safe
 * client (shared/net/outbound.ts); a 2xx answer means accepted. It is registered with the
 * other providers, so a tenant can name it in its `priority_failover` order; while the plugin is
 * not enabled and configured for the tenant, a send fails as `provider_unavailable` and the
 * next provider in the order is tried.
 */
import { DEFAULT_OUTBOUND_POLICY, postJson, type OutboundPolicy } from '../../net/outbound.js';
import { ProviderUnavailableError } from '../mail/errors.js';
import type { EmailProvider, EmailProviderEntry, OutgoingEmail, SendResult } from '../mail/types.js';
import { WEBHOOK_EMAIL_PLUGIN } from './registry.js';
import { webhookHeaders, type PluginRuntime } from './runtime.js';

export class WebhookEmailProvider implements EmailProvider {
  readonly id = WEBHOOK_EMAIL_PLUGIN;

  constructor(
    private readonly runtime: PluginRuntime,
    private readonly defaultFrom: string,
    private readonly policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
  ) {}

  describe(): EmailProviderEntry {
    const def = this.runtime.definition(WEBHOOK_EMAIL_PLUGIN)!;
    return {
      id: this.id,
      name: def.name,
      description: def.description,
      category: 'plugin',
      configSource: 'none',
      configured: false,
      missingRequiredFields: [],
      defaultFrom: this.defaultFrom,
    };
  }

  /** The entry for one tenant, or undefined while the plugin is not enabled for it. */
  async describeFor(tenantId: string): Promise<EmailProviderEntry | undefined> {
    const e = await this.runtime.resolve(WEBHOOK_EMAIL_PLUGIN, tenantId);
    if (!e?.enabled) return undefined;
    return {
      ...this.describe(),
      configSource: e.configSource,
      configured: e.configured,
      missingRequiredFields: e.missingRequiredFields,
      defaultFrom: typeof e.config.from === 'string' ? e.config.from : this.defaultFrom,
    };
  }

  async send(msg: OutgoingEmail): Promise<SendResult> {
    const e = await this.runtime.resolve(WEBHOOK_EMAIL_PLUGIN, msg.tenantId);
    if (!e?.enabled) throw new ProviderUnavailableError('the webhook-email plugin is not enabled for this tenant');
    if (!e.configured) throw new ProviderUnavailableError('the webhook-email plugin is not configured');
    const body = JSON.stringify({
      type: 'iam.email',
      id: msg.id,
      tenantId: msg.tenantId,
      from: typeof e.config.from === 'string' ? e.config.from : this.defaultFrom,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      ...(msg.html ? { html: msg.html } : {}),
    });
    const timeout = typeof e.config.timeoutMs === 'number' ? e.config.timeoutMs : this.policy.totalTimeoutMs;
    // The outbox row id is the delivery id: a retried message carries the same one, so the
    // receiver can drop the duplicate (delivery is at-least-once).
    await postJson(String(e.config.url), body, webhookHeaders(e.config, body, msg.id), {
      ...this.policy,
      totalTimeoutMs: timeout,
      connectTimeoutMs: Math.min(this.policy.connectTimeoutMs, timeout),
    });
    return { messageId: msg.id };
  }
}
