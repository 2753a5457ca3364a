/** How `iam tenants branding show|set` print a tenant's branding (docs/branding.md). */
import type { BrandingView } from '../shared/services/branding.js';
import { fields } from './format.js';

export function showBranding(v: BrandingView, etag: string): string {
  const b = v.branding;
  const e = v.effective;
  const css = b.customCss ? `${b.customCss.length} characters` : '(none)';
  return [
    `Branding of tenant ${v.tenantId}`,
    fields([
      ['display name', b.displayName ?? `(the tenant's name: ${e.displayName})`],
      ['logo', b.logoUrl ?? '(none)'],
      ['primary colour', e.primaryColor ? `${e.primaryColor} (text on it: ${e.primaryTextColor})` : '(default)'],
      ['support link', b.supportUrl ?? '(none)'],
      ['custom CSS', css],
      ['etag', etag],
    ]),
  ].join('\n');
}
