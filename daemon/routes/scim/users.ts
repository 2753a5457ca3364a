/**
 * SCIM /Users (RFC 7644 §3; docs/scim.md): the directory's users, one record.
 */
import type Router from '@koa/router';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';

export function scimUserRoutes(_deps: AppDeps, _api: ApiRegistry, _router: Router<AppState>): void {
  // The routes come with the /Users resource (next commit).
}
