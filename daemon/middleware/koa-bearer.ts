import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.js';
import { isExternalSubject } from '../../shared/services/token-exchange/subjects.js';
import type { AppDeps, AppState } from '../context.js';
import { checkPresentation, presentedToken } from '../dpop.js';

/** RFC 6750 §3: challenge with the error code so clients can tell expired from missing. */
function challenge(error?: string, scope?: string): string {
  return ['Bearer realm="iam"', error ? `error="${error}"` : '', scope ? `scope="${scope}"` : '']
    .filter(Boolean)
    .join(', ');
}

/**
 * Accepts a bearer access token issued by this service (RFC 6750 §2.1 header only; tokens in
 * query strings leak into logs). The token's client must still be active and its tenant not
 * suspended, and it must be a client_credentials token (no user behind it). Missing or invalid
 * token, or a user's token: 401. Valid token lacking every one of `anyOfScopes`: 403.
 */
export function bearer(deps: AppDeps, anyOfScopes: string[]): Middleware<AppState> {
  return async (ctx, next) => {
    const m = presentedToken(ctx);
    if (!m) {
      ctx.set('WWW-Authenticate', challenge());
      throw new ApiError(401, 'invalid_token', 'A bearer access token is required in the Authorization header.');
    }
    let claims;
    try {
      claims = await deps.tokens.verifyAccessToken(m.token, deps.config.issuer);
    } catch {
      ctx.set('WWW-Authenticate', challenge('invalid_token'));
      throw new ApiError(401, 'invalid_token', 'The access token is invalid or expired.');
    }
    // Admin callers are clients with the client_credentials grant (docs/scopes.md): their
    // tokens have the client as subject and no token family. A token issued to a user (code
    // flow, refresh, token exchange: it has a family, another subject, or an actor) is refused
    // whatever scopes it carries (so is one about another issuer's subject, even one whose
    // issuer named the client as `sub`), so a user who consented to an admin scope, on a client
    // registered before such clients were refused, gets nothing from the admin API.
    if (
      typeof claims.fid === 'string' ||
      claims.sub !== claims.client_id ||
      claims.act !== undefined ||
      isExternalSubject(claims)
    ) {
      ctx.set('WWW-Authenticate', challenge('invalid_token'));
      throw new ApiError(
        401,
        'invalid_token',
        'The admin API accepts only access tokens issued with the client_credentials grant.',
      );
    }
    // A token outlives neither its client nor its tenant's active state, nor the client's
    // watermark (a disable revokes the tokens issued until then, docs/directory.md "Clients").
    const found = await deps.directory.resolveClient(String(claims.client_id));
    const watermark = found?.client.tokens_revoked_before;
    if (
      !found ||
      found.client.status !== 'active' ||
      found.tenantState !== 'active' ||
      found.client.tenant_id !== claims.tenant_id ||
      (watermark !== null && watermark !== undefined && !((claims.iat ?? -1) > watermark))
    ) {
      ctx.set('WWW-Authenticate', challenge('invalid_token'));
      throw new ApiError(401, 'invalid_token', 'The access token is no longer valid.');
    }
    // RFC 9449 §7: a client's DPoP-bound token only with a proof of its key.
    await checkPresentation(deps, ctx, m, claims);
    const scopes = new Set(
      String(claims.scope ?? '')
        .split(' ')
        .filter(Boolean),
    );
    if (!anyOfScopes.some((s) => scopes.has(s))) {
      ctx.set('WWW-Authenticate', challenge('insufficient_scope', anyOfScopes.join(' ')));
      throw new ApiError(
        403,
        'insufficient_scope',
        `This operation needs one of the scopes: ${anyOfScopes.join(', ')}.`,
      );
    }
    ctx.state.auth = claims;
    await next();
  };
}
