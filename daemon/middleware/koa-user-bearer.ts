import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.js';
import { isExternalSubject } from '../../shared/services/token-exchange/subjects.js';
import type { AppDeps, AppState } from '../context.js';

/**
 * Bearer authentication for the end user's own endpoints (/api/user/...): an access token
 * this service issued to a user (it carries a token family), not revoked — the same one-query
 * revocation check as introspection: token, family, client, tenant and user. ctx.state.auth
 * holds the claims; `sub` is the user, `tenant_id` the tenant every query is scoped by.
 */
export function userBearer(deps: AppDeps): Middleware<AppState> {
  return async (ctx, next) => {
    const m = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(ctx.get('Authorization'));
    const fail = (message: string) => {
      ctx.set('WWW-Authenticate', `Bearer realm="iam"${m ? ', error="invalid_token"' : ''}`);
      return new ApiError(401, 'invalid_token', message);
    };
    if (!m) throw fail('A bearer access token is required in the Authorization header.');
    let claims;
    try {
      claims = await deps.tokens.verifyAccessToken(m[1]);
    } catch {
      throw fail('The access token is invalid or expired.');
    }
    // A token about another issuer's subject (an exchanged ID-JAG) never acts for a local user,
    // whatever its `sub` looks like (docs/token-exchange.md, "Subjects from other issuers").
    if (isExternalSubject(claims)) throw fail("The access token's subject is not a user of this tenant.");
    if (typeof claims.fid !== 'string') throw fail("This endpoint needs a user's access token.");
    const revoked = await deps.introspection.revoked({
      jti: String(claims.jti ?? ''),
      fid: claims.fid,
      clientId: claims.client_id,
      tenantId: claims.tenant_id,
      sub: String(claims.sub ?? ''),
      agentGrantId: typeof claims.agent_grant_id === 'string' ? claims.agent_grant_id : '',
      agentGrantGen: Number.isSafeInteger(claims.agent_grant_gen) ? Number(claims.agent_grant_gen) : -1,
    });
    if (revoked) throw fail('The access token has been revoked.');
    ctx.state.auth = claims;
    await next();
  };
}
