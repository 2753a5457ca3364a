/** How the `iam clients …` commands print one client and read its JWK Set file (cli/commands/clients/*). */
import { readFileSync } from 'node:fs';
import type { ClientPublic } from '../shared/services/directory.js';
import { fields, list, time } from './format.js';

export function showClient(c: ClientPublic, etag?: string): string {
  return fields([
    ['id', c.id],
    ['client_id', c.client_id],
    ['name', c.name],
    ['type', c.client_type],
    ['status', c.status],
    ['redirect URIs', list(c.redirect_uris)],
    ['grant types', list(c.grant_types)],
    ['scopes', list(c.scopes, ' ')],
    ['allowed origins', list(c.allowed_origins)],
    ['first party', c.first_party ? 'yes' : 'no'],
    ['logo', c.logo_uri ?? ''],
    ['auth method', c.token_endpoint_auth_method],
    ...(c.jwks_uri ? [['jwks_uri', c.jwks_uri] as [string, string]] : []),
    ...(c.jwks ? [['jwks', `${c.jwks.keys.length} key(s)`] as [string, string]] : []),
    ['authorization responses (JARM)', c.authorization_signed_response_alg ?? 'ES256 (default)'],
    ['introspection', c.introspection_signed_response_alg ? `JWT, ${c.introspection_signed_response_alg}` : 'JSON'],
    ['created', time(c.created_at)],
    ['updated', time(c.updated_at)],
    ...(etag ? [['etag', etag] as [string, string]] : []),
  ]);
}

/** `--jwks-file`'s JWK Set (create and update), or undefined without the flag; unreadable: exit 2. */
export function readJwksFile(cmd: { error(message: string, o: { exit: number }): never }, path?: string): unknown {
  if (!path) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (e) {
    return cmd.error(`--jwks-file: cannot read a JSON JWK Set from ${path}: ${(e as Error).message}`, { exit: 2 });
  }
}
