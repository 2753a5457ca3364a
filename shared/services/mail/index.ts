/**
 * The registry of email notifier providers and the `priority_failover` strategy.
 */
import type { JsonObject } from '../../db/entities.js';
import { MailDeliveryError, providerErrorCode, ProviderUnavailableError, type ProviderFailure } from './errors.js';
import { LogProvider, type MailLogger } from './log.js';
import { SmtpProvider } from './smtp.js';
import type { EmailProvider, EmailProviderEntry, EmailSettings, OutgoingEmail, SendResult } from './types.js';

export * from './errors.js';
export * from './types.js';
export { LogProvider, SmtpProvider, type MailLogger };

export class EmailProviders {
  private readonly byId = new Map<string, EmailProvider>();

  /** `logFallback`: the log provider follows SMTP in the default order (IAM_MAIL_LOG). */
  constructor(
    providers: EmailProvider[],
    private readonly logFallback = false,
  ) {
    for (const p of providers) {
      if (this.byId.has(p.id)) throw new Error(`duplicate email provider id ${p.id}`);
      this.byId.set(p.id, p);
    }
  }

  /** Known provider ids, in registration order. */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  get(id: string): EmailProvider | undefined {
    return this.byId.get(id);
  }

  /** Entries for the admin API: the ones in `order` first, in that order, then the rest. */
  entries(order: string[] = []): EmailProviderEntry[] {
    const ids = [...new Set([...order.filter((id) => this.byId.has(id)), ...this.byId.keys()])];
    return ids.map((id) => this.byId.get(id)!.describe());
  }

  /**
   * Entries for one tenant: as entries(), each as the tenant sees it; a plugin provider that is
   * not enabled for the tenant is left out unless its order names it.
   */
  async entriesFor(tenantId: string, order: string[] = []): Promise<EmailProviderEntry[]> {
    const ids = [...new Set([...order.filter((id) => this.byId.has(id)), ...this.byId.keys()])];
    const out: EmailProviderEntry[] = [];
    for (const id of ids) {
      const p = this.byId.get(id)!;
      const entry = p.describeFor ? await p.describeFor(tenantId) : p.describe();
      if (entry) out.push(entry);
      else if (order.includes(id)) out.push({ ...p.describe(), configured: false });
    }
    return out;
  }

  /**
   * The order for a tenant that chose none. With SMTP configured: SMTP alone, so no mail (a
   * login code) reaches the log unless an operator opts in (IAM_MAIL_LOG=1 puts `log` behind
   * SMTP; a tenant's own order may name `log`). Without SMTP (development): the log.
   */
  defaultOrder(): string[] {
    if (!this.byId.get('smtp')?.describe().configured) return ['log'];
    return this.logFallback ? ['smtp', 'log'] : ['smtp'];
  }

  /**
   * The settings in force for a tenant, from `tenants.settings.email`. A stored order naming a
   * provider this build no longer has keeps its other providers; nothing usable → the default.
   */
  settingsFor(tenantSettings: JsonObject | null | undefined): EmailSettings {
    const stored = tenantSettings?.email as Partial<EmailSettings> | undefined;
    const order = Array.isArray(stored?.providerOrder)
      ? stored.providerOrder.filter((id): id is string => typeof id === 'string' && this.byId.has(id))
      : [];
    if (stored?.strategy === 'priority_failover' && order.length)
      return { strategy: 'priority_failover', providerOrder: order };
    return { strategy: 'priority_failover', providerOrder: this.defaultOrder() };
  }

  /**
   * `priority_failover`: each provider in order until one accepts the message. A provider that
   * throws falls through to the next; when all have failed, MailDeliveryError lists why, each
   * failure with its code (the provider's own naming of it, see errors.ts).
   */
  async send(
    order: string[],
    msg: OutgoingEmail,
  ): Promise<{ via: string; result: SendResult; failures: ProviderFailure[] }> {
    const failures: ProviderFailure[] = [];
    for (const id of order) {
      const provider = this.byId.get(id);
      if (!provider) {
        failures.push({
          provider: id,
          error: new ProviderUnavailableError('unknown provider'),
          code: 'provider_unavailable',
        });
        continue;
      }
      try {
        return { via: id, result: await provider.send(msg), failures };
      } catch (e) {
        failures.push({ provider: id, error: e, code: provider.errorCode?.(e) ?? providerErrorCode(e) });
      }
    }
    throw new MailDeliveryError(failures);
  }

  /**
   * The provider a tenant's mail goes through first (the head of its `priority_failover` order),
   * checked with its verify(). A fallback after it is a degraded path (the log provider is for
   * development), so only the first one counts. Resolves with the provider id.
   */
  async verifyPrimary(tenantSettings: JsonObject | null | undefined, timeoutMs: number): Promise<string> {
    const id = this.settingsFor(tenantSettings).providerOrder[0];
    const provider = this.byId.get(id);
    if (!provider) throw new Error(`unknown email provider ${id}`);
    await provider.verify?.(timeoutMs);
    return id;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.byId.values()].map(async (p) => p.close?.()));
  }
}

/**
 * The providers this build has: `smtp` (configured by IAM_SMTP_URL), `log`, and the plugin
 * providers given; `mailLog` (IAM_MAIL_LOG) keeps `log` in the default order behind SMTP.
 */
export function createEmailProviders(
  config: { smtpUrl?: string | undefined; mailFrom: string; mailLog?: boolean },
  logger: MailLogger,
  plugins: EmailProvider[] = [],
): EmailProviders {
  return new EmailProviders(
    [
      new SmtpProvider(config.smtpUrl, config.mailFrom),
      new LogProvider(logger, config.mailFrom),
      // Plugin providers (webhook-email): after the built-in ones, so they are never a default.
      ...plugins,
    ],
    config.mailLog === true,
  );
}
