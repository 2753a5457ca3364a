import { readFile } from 'node:fs/promises';
import { Flags } from '@oclif/core';
import { LOCALES, type Locale } from '../../../../shared/i18n/index.js';
import { MAIL_KIND_NAMES, type MailKind } from '../../../../shared/services/mail-templates.js';
import { BaseCommand, CliFailure } from '../../../base.js';
import { fields } from '../../../format.js';

export default class MailTemplatesSet extends BaseCommand<typeof MailTemplatesSet> {
  static override summary = "Override a tenant's subject, text and/or HTML of one mail kind in one locale.";
  static override description =
    "Replaces the override of that kind and locale: the parts given are the tenant's, the others the " +
    "defaults. The syntax is {{name}} with the kind's variables only (no logic); an unknown variable is " +
    "refused, naming it. The HTML part is the body: values are escaped and the tenant's branded frame " +
    'is added around it. Audited (tenant.mail_template.update). Kinds and variables: docs/email.md, "Templates".';
  static override examples = [
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --kind sign_in_code --locale de --subject '{{code}}'",
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --kind sign_in_code --text-file c.txt --html-file c.html',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    kind: Flags.string({ description: 'the mail kind', options: [...MAIL_KIND_NAMES], required: true }),
    locale: Flags.string({ description: 'the locale', options: [...LOCALES], default: 'en' }),
    subject: Flags.string({ description: 'the subject line' }),
    text: Flags.string({ description: 'the plain-text body', exclusive: ['text-file'] }),
    'text-file': Flags.string({ description: 'read the plain-text body from this file' }),
    html: Flags.string({ description: 'the HTML body', exclusive: ['html-file'] }),
    'html-file': Flags.string({ description: 'read the HTML body from this file' }),
  };
  static override fieldFlags = { subject: 'subject', text: 'text', html: 'html' };

  async run() {
    const f = this.flags;
    const read = async (path: string | undefined, flag: string) => {
      if (path === undefined) return undefined;
      try {
        return await readFile(path, 'utf8');
      } catch (e) {
        throw new CliFailure('invalid_request', `--${flag}: cannot read ${path}: ${(e as Error).message}`);
      }
    };
    const text = f.text ?? (await read(f['text-file'], 'text-file'));
    const html = f.html ?? (await read(f['html-file'], 'html-file'));
    const input = {
      ...(f.subject !== undefined ? { subject: f.subject } : {}),
      ...(text !== undefined ? { text } : {}),
      ...(html !== undefined ? { html } : {}),
    };
    if (!Object.keys(input).length)
      throw new CliFailure('invalid_request', 'give at least one of --subject, --text(-file), --html(-file)', 2);
    await this.requireTenant(f.tenant);
    this.serviceInput = input;
    const r = await this.services.mailTemplates.put(
      f.tenant,
      f.kind as MailKind,
      f.locale as Locale,
      input,
      this.actor,
    );
    this.log(`${r.created ? 'Created' : 'Replaced'} the ${f.kind} (${f.locale}) override of tenant ${f.tenant}.`);
    this.log(
      fields([['parts', (['subject', 'text', 'html'] as const).filter((p) => r.template[p] !== null).join(' ')]]),
    );
    return r.template;
  }
}
