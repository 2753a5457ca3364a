/**
 * A tenant's email notifier settings, kept in `tenants.settings.email` as
 * `{ strategy, providerOrder }`. The outbox deliverer reads them for every batch, so a change
 * applies to the next message sent.
 */
import type { Database } from '../db/index.js';
import { notFound } from '../errors.js';
import { TenantRepository } from '../repositories/index.js';
import { emailSettingsInput } from '../schemas/email.js';
import { parseInput } from '../schemas/validate.js';
import { audit, type Actor } from './audit.js';
import type { EmailProviders } from './mail/index.js';
import type { EmailProviderEntry, EmailSettings } from './mail/types.js';

export interface EmailSettingsResult {
  tenantId: string;
  settings: EmailSettings;
  providers: EmailProviderEntry[];
}

export class EmailSettingsService {
  /** The validated body shape, with this build's provider ids. */
  readonly input: ReturnType<typeof emailSettingsInput>;

  constructor(
    private readonly ds: Database,
    private readonly providers: EmailProviders,
  ) {
    this.input = emailSettingsInput(providers.ids());
  }

  private result(tenantId: string, settings: EmailSettings): EmailSettingsResult {
    return { tenantId, settings, providers: this.providers.entries(settings.providerOrder) };
  }

  /** The settings in force (the default order when the tenant chose none). */
  async get(tenantId: string): Promise<EmailSettingsResult> {
    const settings = await new TenantRepository(this.ds).settings(tenantId);
    if (settings === undefined) throw notFound(`Tenant ${tenantId}`);
    return this.result(tenantId, this.providers.settingsFor(settings));
  }

  /** Replaces the strategy and provider order; audited in the same transaction. */
  async update(tenantId: string, input: unknown, actor: Actor): Promise<EmailSettingsResult> {
    const { strategy, providerOrder } = parseInput(this.input, input);
    const email: EmailSettings = { strategy, providerOrder: [...providerOrder] };
    await this.ds.transaction(async (tx) => {
      const tenants = new TenantRepository(tx);
      // Locked for the read-modify-write: settings is one JSON document, and a concurrent change
      // to another key must not be overwritten.
      const stored = await tenants.settings(tenantId, { forUpdate: true });
      if (stored === undefined) throw notFound(`Tenant ${tenantId}`);
      const settings = stored ?? {};
      const before: unknown = settings.email ?? null;
      await tenants.writeSettings(tenantId, { ...settings, email }, Date.now());
      await audit(tx, actor, {
        tenantId,
        action: 'tenant.email_settings.update',
        targetType: 'tenant',
        targetId: tenantId,
        summary: { before, after: email },
      });
    });
    return this.result(tenantId, email);
  }
}
