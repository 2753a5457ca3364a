/**
 * The SCIM 2.0 service under /scim/v2 (docs/scim.md). Each resource area is a module that
 * declares its routes on the one router; /Groups adds its module to SCIM_ROUTE_MODULES.
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { scimDiscoveryRoutes } from './discovery.js';
import { scimUserRoutes } from './users.js';
import { scimGroupRoutes } from './groups.js';

/** A resource area's routes: declared on `router` through `api.add` (see common.ts). */
export type ScimRouteModule = (deps: AppDeps, api: ApiRegistry, router: Router<AppState>) => void;

/** Every SCIM route module, in order. */
export const SCIM_ROUTE_MODULES: ScimRouteModule[] = [
  scimDiscoveryRoutes,
  // /Users (users.ts)
  scimUserRoutes,
  // /Groups: add its module below this line.
  scimGroupRoutes,
];

export function scimRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  for (const m of SCIM_ROUTE_MODULES) m(deps, api, router);
  return router;
}
