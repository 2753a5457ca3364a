/**
 * A tenant's email notifier settings, kept in `tenants.settings.email` as
 * `{ strategy, providerOrder }`. The outbox deliverer reads them for every batch, so a change
 * applies to the next message sent.
 */
import type { DataSource } from 'typeorm';
import { json, one } from '../db/sql.js';
import type { JsonObject } from '../db/entities.js';
import { notFound } from '../errors.js';
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
    private readonly ds: DataSource,
    private readonly providers: EmailProviders,
  ) {
    this.input = emailSettingsInput(providers.ids());
  }

  private result(tenantId: string, settings: EmailSettings): EmailSettingsResult {
    return { tenantId, settings, providers: this.providers.entries(settings.providerOrder) };
  }

  /** The settings in force (the default order when the tenant chose none). */
  async get(tenantId: string): Promise<EmailSettingsResult> {
    const row = await one<{ settings: unknown }>(this.ds, 'SELECT settings FROM tenants WHERE id = ?', [tenantId]);
    if (!row) throw notFound(`Tenant ${tenantId}`);
    return this.result(tenantId, this.providers.settingsFor(json<JsonObject | null>(row.settings)));
  }

  /** Replaces the strategy and provider order; audited in the same transaction. */
  async update(tenantId: string, input: unknown, actor: Actor): Promise<EmailSettingsResult> {
    const { strategy, providerOrder } = parseInput(this.input, input);
    const email: EmailSettings = { strategy, providerOrder: [...providerOrder] };
    // FOR UPDATE on MySQL: settings is one JSON document, and a concurrent change to another
    // key must not be overwritten by this read-modify-write. SQLite serialises writers anyway.
    const lock = this.ds.options.type === 'mysql' ? ' FOR UPDATE' : '';
    await this.ds.transaction(async (em) => {
      const row = await one<{ settings: unknown }>(em, `SELECT settings FROM tenants WHERE id = ?${lock}`, [tenantId]);
      if (!row) throw notFound(`Tenant ${tenantId}`);
      const settings = json<JsonObject | null>(row.settings) ?? {};
      const before = settings.email ?? null;
      await em.query('UPDATE tenants SET settings = ?, updated_at = ? WHERE id = ?', [
        JSON.stringify({ ...settings, email }),
        Date.now(),
        tenantId,
      ]);
      await audit(em, actor, {
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
