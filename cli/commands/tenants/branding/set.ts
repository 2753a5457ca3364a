import { readFileSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../../base.js';
import { showBranding } from '../../../branding.js';

const FIELDS = {
  'display-name': 'displayName',
  'logo-url': 'logoUrl',
  'primary-color': 'primaryColor',
  'support-url': 'supportUrl',
  'custom-css-file': 'customCss',
} as const;

export default class TenantsBrandingSet extends BaseCommand<typeof TenantsBrandingSet> {
  static override summary = "Change a tenant's branding: name, logo, colour, support link, custom CSS.";
  static override description =
    'Changes the fields named by flags and keeps the others (--unset clears one); the result is validated and ' +
    'stored as PUT /api/admin/tenants/{tenantId}/branding stores it, audited (tenant.branding.update). The ' +
    'logo is an https URL or a path of this service (/…); the colour #rrggbb; the support link https or ' +
    'mailto:; the custom CSS at most 8192 characters, without </style. A change made by someone else between ' +
    'the read and the write is refused (precondition_failed), as is one made since --if-match was read. ' +
    'See docs/branding.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --display-name "Acme" --primary-color "#0b5fff"',
    {
      description: 'A logo, a support address and a stylesheet from a file.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --logo-url https://cdn.acme.example/logo.png ' +
        '--support-url mailto:help@acme.example --custom-css-file acme.css',
    },
    {
      description: 'Back to the default colour.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --unset primary-color',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    'display-name': Flags.string({ description: "the name shown on the tenant's pages (default: the tenant's name)" }),
    'logo-url': Flags.string({ description: 'the logo: an https URL, or a path of this service such as /logo.png' }),
    'primary-color': Flags.string({ description: 'the primary colour (buttons), #rrggbb' }),
    'support-url': Flags.string({ description: 'where users get help: an https URL or mailto:' }),
    'custom-css-file': Flags.string({ description: "a CSS file appended to the pages' stylesheet (- for stdin)" }),
    unset: Flags.string({
      description: 'clear a field (repeatable)',
      options: Object.keys(FIELDS),
      multiple: true,
    }),
    'if-match': Flags.string({ description: 'the ETag read before (refused if the branding changed since)' }),
  };
  static override fieldFlags = Object.fromEntries(Object.entries(FIELDS).map(([flag, field]) => [field, flag]));

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const { view, etag } = await this.services.branding.view(f.tenant);
    const next: Record<string, string> = { ...view.branding };
    for (const flag of f.unset ?? []) delete next[FIELDS[flag as keyof typeof FIELDS]];
    for (const [flag, field] of Object.entries(FIELDS)) {
      const v = f[flag as keyof typeof FIELDS];
      if (v === undefined) continue;
      if ((f.unset ?? []).includes(flag))
        throw new CliFailure('usage_error', `--${flag} and --unset ${flag} contradict each other`, 2);
      next[field] = flag === 'custom-css-file' ? readCss(v) : v;
    }
    if (Object.keys(FIELDS).every((flag) => f[flag as keyof typeof FIELDS] === undefined) && !f.unset?.length)
      throw new CliFailure('usage_error', `give at least one of --${Object.keys(FIELDS).join(', --')}, --unset`, 2);
    this.serviceInput = next;
    const r = await this.services.branding.update(f.tenant, next, this.actor, {
      ifMatch: f['if-match'] ?? etag,
    });
    this.log(showBranding(r.view, r.etag));
    return { ...r.view, etag: r.etag };
  }
}

function readCss(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new CliFailure('usage_error', `--custom-css-file: cannot read ${path}: ${(e as Error).message}`, 2);
  }
}
