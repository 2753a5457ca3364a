import type { Middleware } from 'koa';
import type { Client, TokenEndpointAuthMethod } from '../../shared/db/entities.js';
import { InvalidClient, InvalidRequest } from '../../shared/errors.js';
import { parseBasic, type PresentedCredentials } from '../../shared/services/client-auth.js';
import type { AppDeps, AppState } from '../context.js';

export type ClientAuthMethod = TokenEndpointAuthMethod;
export interface ClientAuthState extends AppState {
  client?: Client;
  clientAuthMethod?: ClientAuthMethod;
}

const CREDENTIAL_PARAMS = ['client_id', 'client_secret', 'client_assertion_type', 'client_assertion'] as const;

/**
 * The credentials a request presents: the Authorization header (HTTP Basic) and the form's
 * client_id, client_secret, client_assertion_type and client_assertion. A repeated parameter
 * is refused (RFC 6749 §3.2: "parameters MUST NOT be included more than once").
 */
export function presentedCredentials(authorization: string, form: Record<string, unknown>): PresentedCredentials {
  const basic = authorization ? parseBasic(authorization) : undefined;
  if (authorization && !basic) throw new InvalidClient('The Authorization header is not valid HTTP Basic credentials.');
  const p: PresentedCredentials = { basic };
  for (const k of CREDENTIAL_PARAMS) {
    const v = form[k];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new InvalidRequest(`${k} must be given once.`);
    p[k] = v;
  }
  return p;
}

/**
 * Authenticates the calling client with the method it is registered for (docs/oauth.md,
 * "Client authentication"; shared/services/client-auth.ts does the checks and counts the
 * failures against the throttling budgets). `allowPublic` is false where only confidential
 * clients may call.
 */
export function authenticateClient(
  deps: AppDeps,
  opts: { allowPublic: boolean } = { allowPublic: true },
): Middleware<ClientAuthState> {
  return async (ctx, next) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const presented = presentedCredentials(ctx.get('Authorization'), body);
    const { client, method } = await deps.clientAuth.authenticate(presented, ctx.ip, opts);
    ctx.state.client = client;
    ctx.state.clientAuthMethod = method;
    await next();
  };
}
