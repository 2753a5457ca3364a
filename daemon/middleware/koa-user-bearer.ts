import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.js';
import { SCOPE_ACCOUNT } from '../../shared/scopes.js';
import { isExternalSubject } from '../../shared/services/token-exchange/subjects.js';
import type { AppDeps, AppState } from '../context.js';
import { checkPresentation, presentedToken } from '../dpop.js';

/**
 * Bearer authentication for the end user's own endpoints (/api/user/...): an access token
 * this service issued to a user (it carries a token family), not revoked — the same one-query
 * revocation check as introspection: token, family, client, tenant and user. ctx.state.auth
 * holds the claims; `sub` is the user, `tenant_id` the tenant every query is scoped by.
 *
 * ctx.state.account says whether the token reaches the whole account API: it carries the
 * `account` scope and its client is first-party now (checked here, not only when the token
 * was issued, so neither a token exchanged by a third-party client nor a client no longer
 * first-party keeps that reach; docs/scopes.md, "The account scope"). With
 * `requireAccount`, a token without it is refused with 403 insufficient_scope and a challenge
 * naming the scope (RFC 6750 §3.1), before the input is validated.
 */
export function userBearer(deps: AppDeps, opts: { requireAccount?: boolean } = {}): Middleware<AppState> {
  return async (ctx, next) => {
    const m = presentedToken(ctx);
    const fail = (message: string) => {
      ctx.set('WWW-Authenticate', `Bearer realm="iam"${m ? ', error="invalid_token"' : ''}`);
      return new ApiError(401, 'invalid_token', message);
    };
    if (!m) throw fail('A bearer access token is required in the Authorization header.');
    let claims;
    try {
      claims = await deps.tokens.verifyAccessToken(m.token);
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
      iat: Number.isSafeInteger(claims.iat) ? Number(claims.iat) : -1,
      agentGrantId: typeof claims.agent_grant_id === 'string' ? claims.agent_grant_id : '',
      agentGrantGen: Number.isSafeInteger(claims.agent_grant_gen) ? Number(claims.agent_grant_gen) : -1,
    });
    if (revoked) throw fail('The access token has been revoked.');
    await checkPresentation(deps, ctx, m, claims);
    const scopes = String(claims.scope ?? '').split(' ');
    let account = false;
    if (scopes.includes(SCOPE_ACCOUNT)) {
      const found = await deps.directory.resolveClient(String(claims.client_id));
      account = found?.client.first_party === true && found.client.tenant_id === claims.tenant_id;
    }
    if (opts.requireAccount && !account) {
      ctx.set('WWW-Authenticate', `Bearer realm="iam", error="insufficient_scope", scope="${SCOPE_ACCOUNT}"`);
      throw new ApiError(
        403,
        'insufficient_scope',
        `This endpoint needs an access token with the ${SCOPE_ACCOUNT} scope, issued to a first-party application.`,
      );
    }
    ctx.state.auth = claims;
    ctx.state.account = account;
    await next();
  };
}
