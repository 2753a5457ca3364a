import { Flags } from '@oclif/core';
import { LOCALES, type Locale } from '../../../../shared/i18n/index.js';
import { MAIL_KIND_NAMES, type MailKind } from '../../../../shared/services/mail-templates.js';
import { BaseCommand } from '../../../base.js';

export default class MailTemplatesDelete extends BaseCommand<typeof MailTemplatesDelete> {
  static override summary = "Remove a tenant's override of one mail kind in one locale (the default applies again).";
  static override description =
    'No confirmation is asked: the default takes over at once and nothing of a user is lost; ' +
    '`iam mail templates list --json` first keeps the text. Audited (tenant.mail_template.delete).';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_123 --kind sign_in_code --locale de'];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    kind: Flags.string({ description: 'the mail kind', options: [...MAIL_KIND_NAMES], required: true }),
    locale: Flags.string({ description: 'the locale', options: [...LOCALES], default: 'en' }),
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    await this.services.mailTemplates.delete(f.tenant, f.kind as MailKind, f.locale as Locale, this.actor);
    this.log(`Removed the ${f.kind} (${f.locale}) override of tenant ${f.tenant}; the default applies.`);
    return { tenant_id: f.tenant, kind: f.kind, locale: f.locale, removed: true };
  }
}
