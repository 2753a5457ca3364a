import { Flags } from '@oclif/core';
import { LOCALES } from '../../../shared/i18n/index.js';
import { MAIL_KIND_NAMES } from '../../../shared/services/mail-templates.js';
import { BaseCommand } from '../../base.js';

export default class MailPreview extends BaseCommand<typeof MailPreview> {
  static override summary = "Show a tenant's mail of one kind as it would be sent now, with sample values.";
  static override description =
    "Renders the mail with the tenant's override of that kind and locale when it has one, else the " +
    'default, filled with sample values (code 123456, …): the subject, the plain text and, with --html, ' +
    'the HTML part. A stored override that no longer checks is reported and the default shown, as the ' +
    'service would send it. Kinds and their variables: docs/email.md, "Templates".';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --kind sign_in_code',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --kind sign_in_code --locale de --html',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --kind email_changed --json | jq -r .html > preview.html',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    kind: Flags.string({ description: 'the mail kind', options: [...MAIL_KIND_NAMES], required: true }),
    locale: Flags.string({ description: 'the locale', options: [...LOCALES], default: 'en' }),
    html: Flags.boolean({ description: 'print the HTML part too' }),
  };
  static override fieldFlags = { kind: 'kind', locale: 'locale' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const p = await this.services.mailTemplates.preview(f.tenant, f.kind, f.locale);
    if (p.error)
      process.stderr.write(`Warning: the tenant's override is not usable (${p.error}); showing the default.\n`);
    this.log(`Subject: ${p.subject}`);
    this.log(`(${p.kind}, ${p.locale}, ${p.source === 'override' ? "the tenant's override" : 'the default'})`);
    this.log('');
    this.log(p.text.replace(/\n$/, ''));
    if (f.html) {
      this.log('');
      this.log('--- HTML ---');
      this.log(p.html);
    }
    return p;
  }
}
