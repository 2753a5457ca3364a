import type { Logger } from 'pino';
import type { Services } from '../shared/container.js';
import type { AccessTokenClaims } from '../shared/services/tokens.js';
import type { FoundSession } from '../shared/services/auth/sessions.js';
import type { IdempotencyHandle } from '../shared/services/idempotency.js';

/**
 * Everything the routes need: the container of the request side (shared/container.ts), built
 * once by main.ts with the daemon's logger and passed down explicitly. A service the routes
 * need is a getter there, never a field here.
 */
export type AppDeps = Services<Logger>;

/** What our middleware puts on ctx.state. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** Set by the bearer middleware. */
  auth?: AccessTokenClaims;
  /**
   * Set by the user bearer middleware (koa-user-bearer.ts): whether the token reaches the whole
   * account API (it carries the `account` scope and its client is first-party); without it a
   * token reaches only its own client's consent (docs/scopes.md, "The account scope").
   */
  account?: boolean;
  /** Set by the session middleware (koa-session.ts): the browser's live session and its user. */
  session?: FoundSession;
  /**
   * Set by the guard middleware: the validated input. Unknown-valued here; a handler registered
   * through `api.add` sees it typed from its route's schemas (WithGuard in koa-guard.ts).
   */
  guard?: { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown };
  /** Set by the error renderer when it hands out an error_id, so the access-log line carries it. */
  errorId?: string;
  /** Set by the idempotency middleware: record the answer in the transaction of the change. */
  idempotency?: IdempotencyHandle;
  /**
   * Set by the registry's tenant check (route-declarations.ts): the tenant a bearer route acts
   * on, from its declared binding; a route's handlers see it typed (string, or null for the
   * platform-wide bindings).
   */
  tenant?: string | null;
  /**
   * Set by the route's declared error style (ErrorStyle, route-declarations.ts); the error
   * renderer reads it (koa-error-handler.ts). `scim`: RFC 7644 §3.12's error object (/scim/v2).
   */
  errorStyle?: 'oauth' | 'user' | 'scim';
}
