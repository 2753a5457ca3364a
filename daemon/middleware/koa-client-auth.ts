import type { Middleware } from 'koa';
import type { Client } from '../../shared/db/entities.js';
import { InvalidClient, InvalidRequest } from '../../shared/errors.js';
import type { AppDeps, AppState } from '../context.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';
export interface ClientAuthState extends AppState {
  client?: Client;
  clientAuthMethod?: ClientAuthMethod;
}

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
function formDecode(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

/** The client_id and secret of an HTTP Basic Authorization header, or undefined if it is not one. */
export function parseBasic(header: string): { id: string; secret: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  try {
    return { id: formDecode(decoded.slice(0, i)), secret: formDecode(decoded.slice(i + 1)) };
  } catch {
    return undefined;
  }
}

/**
 * Authenticates the calling client: client_secret_basic, client_secret_post, or `none` for a
 * public client that only names itself. Using more than one method is refused (RFC 6749 §2.3).
 * `allowPublic` is false where only confidential clients may call (introspection, RFC 7662 §2.1).
 *
 * Failures count against the client's and the IP's budgets (docs/security.md); once one is
 * spent a failure is answered 429 `slow_down` instead of 401, and once the IP's is, every
 * attempt from it is refused before the credentials are checked. A success costs no database
 * access for this.
 */
export function authenticateClient(
  deps: AppDeps,
  opts: { allowPublic: boolean; allowPost?: boolean } = { allowPublic: true },
): Middleware<ClientAuthState> {
  return async (ctx, next) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const authz = ctx.get('Authorization');
    const basic = authz ? parseBasic(authz) : undefined;
    if (authz && !basic) throw new InvalidClient('The Authorization header is not valid HTTP Basic credentials.');
    const postId = typeof body.client_id === 'string' ? body.client_id : undefined;
    const postSecret = typeof body.client_secret === 'string' ? body.client_secret : undefined;
    if (basic && postSecret !== undefined)
      throw new InvalidRequest('Use one client authentication method, not several.');
    if (basic && postId !== undefined && postId !== basic.id)
      throw new InvalidRequest('client_id does not match the authenticated client.');

    let method: ClientAuthMethod;
    let clientId: string | undefined;
    let secret: string | undefined;
    if (basic) {
      method = 'client_secret_basic';
      clientId = basic.id;
      secret = basic.secret;
    } else if (postSecret !== undefined && opts.allowPost !== false) {
      method = 'client_secret_post';
      clientId = postId;
      secret = postSecret;
    } else {
      method = 'none';
      clientId = postId;
    }
    if (!clientId) throw new InvalidClient('Client authentication is required.');
    deps.throttle.clientAuthBlocked(ctx.ip);

    const found = await deps.directory.resolveClient(clientId);
    const client = found?.client;
    let ok = false;
    if (client && client.status === 'active' && found.tenantState === 'active') {
      if (method === 'none') ok = client.client_type === 'public' && opts.allowPublic;
      else ok = client.client_type === 'confidential' && deps.directory.verifyClientSecret(client, secret ?? '');
    }
    // One message for every failure: the caller learns nothing about which part was wrong.
    if (!ok || !client) {
      await deps.throttle.clientAuthFailure(clientId, ctx.ip);
      throw new InvalidClient();
    }
    ctx.state.client = client;
    ctx.state.clientAuthMethod = method;
    await next();
  };
}
