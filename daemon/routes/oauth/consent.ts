/**
 * The consent form GET /authorize shows (POST /authorize/consent): the signed-in user allows
 * or denies the client the scopes it asked for. The answer consumes the saved authorization
 * request (once: a second answer is refused), so a form cannot be replayed; allowing records
 * the consent and issues the code, denying sends access_denied back to the client.
 */
import Router from '@koa/router';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import type { ApiRegistry } from '../../openapi.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie } from '../../cookies.js';
import { errorPage } from '../../views/html.js';
import { authorizationFlow } from './authorization.js';

export function consentRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { respond, target, finish, formContext } = authorizationFlow(deps);

  api.page(router, { method: 'post', path: '/authorize/consent', parser: 'form' }, async (ctx) => {
    const f = await formContext(ctx);
    if (!f) return;
    const current = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
    if (!current || current.session.tenant_id !== f.client.tenant_id) return errorPage(ctx, 401, 'signedOut', f.look);
    if (!(await deps.oauth.consumeAuthRequest(f.req.tenantId, f.challenge)))
      return errorPage(ctx, 400, 'answered', f.look);
    const p = f.req.params;
    if (f.b.decision !== 'allow')
      return respond(ctx, target(f.client, p), {
        error: 'access_denied',
        error_description: 'The user denied the request.',
        state: p.state,
      });
    await deps.oauth.grantConsent({
      tenantId: f.client.tenant_id,
      userId: current.user.id,
      clientId: f.client.client_id,
      scopes: p.scope,
      policyVersions: f.policyVersions,
    });
    await finish(ctx, f.client, p, current.session, current.user);
  });

  return router;
}
