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
import type { Actor } from './audit.js';
import { updateSettingsSection } from './tenant-settings.js';
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

  private async result(tenantId: string, settings: EmailSettings): Promise<EmailSettingsResult> {
    // Per tenant: a plugin provider (webhook-email) joins the list where it is enabled.
    return { tenantId, settings, providers: await this.providers.entriesFor(tenantId, settings.providerOrder) };
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
    await updateSettingsSection(
      this.ds,
      { tenantId, section: 'email', action: 'tenant.email_settings.update', actor },
      (settings) => ({ before: (settings.email as unknown) ?? null, after: email }),
    );
    return this.result(tenantId, email);
  }
}
