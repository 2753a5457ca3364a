/**
 * The one RFC 8707 rule every token request applies to its `resource` parameters: /authorize,
 * and /token's authorization_code, refresh_token, client_credentials and token exchange grants
 * (docs/oauth.md, "Resource indicators"). Pushed authorization requests (RFC 9126), when they
 * land, call it on the pushed parameters before storing them, as /authorize does.
 *
 * A resource is acceptable when it is
 * - an absolute URI without a fragment (RFC 8707 §2),
 * - not this authorization server (resource-identifiers.ts: the issuer, its endpoints, its path),
 * - and the client may name it: a client with registered `audiences` only those (the operator's
 *   allow list for it, as before); a client with none (a dynamically registered client, a client
 *   ID metadata document's) any registered resource server of its tenant, that is a value some
 *   client of the tenant lists among its `resource_identifiers`, compared exactly as stored.
 * Anything else is `invalid_target` (§2).
 */
import type { Client } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { TenantScope } from '../repositories/index.js';
import { isIssuerUrl } from './resource-identifiers.js';

/** Why `resources` cannot be served to `client`, or undefined when every one can (one read at most). */
export async function resourceRefusal(
  db: Db,
  client: Client,
  resources: readonly string[],
  issuer: string,
): Promise<string | undefined> {
  for (const r of resources) {
    let u: URL | undefined;
    try {
      u = new URL(r);
    } catch {
      /* reported below */
    }
    if (!u || r.includes('#')) return `resource ${r} is not an absolute URI without a fragment.`;
    if (isIssuerUrl(r, issuer)) return `resource ${r} is this authorization server, not a resource server.`;
  }
  if (!resources.length) return undefined;
  if (client.audiences.length) {
    const outside = resources.filter((r) => !client.audiences.includes(r));
    return outside.length ? `Resource not allowed for this client: ${outside.join(' ')}` : undefined;
  }
  const known = await new TenantScope(db, client.tenant_id).clients.registeredResources(resources);
  const unknown = resources.filter((r) => !known.includes(r));
  return unknown.length
    ? `Resource is not a registered resource server of this tenant: ${unknown.join(' ')}`
    : undefined;
}
