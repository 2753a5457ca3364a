import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { table, time } from '../../../format.js';

export default class MailTemplatesList extends BaseCommand<typeof MailTemplatesList> {
  static override summary = "List a tenant's mail template overrides (the rest use the defaults).";
  static override description =
    'Each override: kind, locale, which parts it replaces, when it changed, and the last send that ' +
    'could not use it (the default was sent instead: fix or delete the override). ' +
    'Kinds and their variables: docs/email.md, "Templates".';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --json',
  ];
  static override flags = { tenant: Flags.string({ description: 'id of the tenant', required: true }) };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { items } = await this.services.mailTemplates.list(this.flags.tenant);
    this.log(
      table(
        items,
        [
          { header: 'kind', value: (i) => i.kind },
          { header: 'locale', value: (i) => i.locale },
          {
            header: 'parts',
            value: (i) => (['subject', 'text', 'html'] as const).filter((p) => i[p] !== null).join(' '),
          },
          { header: 'updated', value: (i) => time(i.updated_at) },
          { header: 'last error', value: (i) => i.last_error ?? '-' },
        ],
        `No overrides for tenant ${this.flags.tenant}: every mail uses the defaults.`,
      ),
    );
    return items;
  }
}
