/** How the `iam clients …` commands print one client (cli/commands/clients/*). */
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
    ['created', time(c.created_at)],
    ['updated', time(c.updated_at)],
    ...(etag ? [['etag', etag] as [string, string]] : []),
  ]);
}
