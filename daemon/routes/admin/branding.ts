import type Router from '@koa/router';
import { BrandingInput, BrandingView } from '../../../shared/schemas/branding.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { settingsSectionRoutes } from './settings-section.js';

/**
 * A tenant's branding (docs/branding.md): the display name, logo, primary colour, support link
 * and custom CSS of its sign-in pages and mails. PUT replaces it whole; both answer the stored
 * branding with a strong ETag, which an optional If-Match on PUT compares (RFC 9110 §13.1.1).
 */
export function brandingRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  return settingsSectionRoutes(deps, api, {
    path: '/api/admin/tenants/:tenantId/branding',
    tag: 'admin: branding',
    service: (d) => d.branding,
    input: BrandingInput,
    view: BrandingView,
    what: 'branding',
    summaries: {
      get: "The tenant's branding as stored and as its pages show it; the ETag is what If-Match on PUT compares",
      put:
        "Replace the tenant's branding (a field left out is cleared); optional If-Match (a strong ETag from GET, " +
        'or *): a mismatch is 412',
    },
    invalid:
      'invalid branding; the message names the field (a colour not #rrggbb, a logo not https or a path of ' +
      'this origin, a support link not https or mailto:, custom CSS too long or containing </style)',
  });
}
