/**
 * The console's settings sections of a tenant (docs/console.md, "Pages"): identity providers,
 * custom claims, plugins, token exchange and email, one file each by concern (settings-*.ts),
 * sharing the checks of settings-kit.ts, on one router.
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { claimPages } from './settings-claims.js';
import { identityProviderPages } from './settings-idp.js';
import { settingsPages } from './settings-kit.js';
import { pluginPages } from './settings-plugins.js';
import { tenantSettingsPages } from './settings-tenant.js';

export function consoleSettingsRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const s = settingsPages(deps, api, router);
  identityProviderPages(s);
  claimPages(s);
  pluginPages(s);
  tenantSettingsPages(s);
  return router;
}
