/**
 * The account console's own OAuth client (docs/account.md, "Signing in"): the /account page
 * signs a signed-out user in like any app, with the authorization code flow and PKCE against
 * the tenant's own /authorize. Each tenant gets one such client, created on its first use
 * rather than at tenant creation, so tenants that existed before it need no migration and a
 * tenant that never uses the console has no extra client. It is public (no secret: the code is
 * redeemed inside the daemon, and PKCE binds it to the browser that started), first-party (no
 * consent page: it is the service itself), may only use the authorization code grant with the
 * `openid` scope, and its only redirect URI is the issuer's /account/callback.
 */
import { createHash } from 'node:crypto';
import { newId } from '../../crypto.js';
import type { Client } from '../../db/entities.js';
import { isUniqueViolation, type Database } from '../../db/index.js';
import { TenantRepository, TenantScope } from '../../repositories/index.js';
import { audit } from '../audit.js';

/** The console's client_id in a tenant: client ids are unique across tenants, so it names the tenant. */
export const accountConsoleClientId = (tenantId: string): string => `account-console.${tenantId}`;

/** The redirect URI of the console's client under `issuer`. */
export const accountConsoleRedirectUri = (issuer: string): string => `${issuer}/account/callback`;

/**
 * The tenant's console client, created (and audited as the system's act) when missing, its
 * redirect URI brought in line with the issuer if that changed. Undefined for no such tenant.
 */
export function ensureAccountConsoleClient(
  db: Database,
  tenantId: string,
  issuer: string,
): Promise<Client | undefined> {
  return ensureFirstPartyClient(db, tenantId, {
    clientId: accountConsoleClientId(tenantId),
    name: 'Account',
    redirectUri: accountConsoleRedirectUri(issuer),
    actorId: 'account-console',
  });
}

/**
 * A first-party public client of the service's own pages (the account page's, the operator
 * console's: docs/console.md), as above: created on first use, its one redirect URI kept in
 * line with the issuer.
 */
export async function ensureFirstPartyClient(
  db: Database,
  tenantId: string,
  spec: { clientId: string; name: string; redirectUri: string; actorId: string },
): Promise<Client | undefined> {
  if (!(await new TenantRepository(db).get(tenantId))) return undefined;
  const { clientId, redirectUri } = spec;
  const scope = new TenantScope(db, tenantId);
  const found = await scope.clients.getByClientId(clientId);
  if (found) {
    if (found.redirect_uris.length === 1 && found.redirect_uris[0] === redirectUri) return found;
    await scope.clients.update(found.id, clientId, { redirect_uris: [redirectUri], updated_at: Date.now() });
    return { ...found, redirect_uris: [redirectUri] };
  }
  const now = Date.now();
  const row: Omit<Client, 'tenant_id'> = {
    id: newId('cli'),
    client_id: clientId,
    name: spec.name,
    client_type: 'public',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code'],
    scopes: ['openid'],
    audiences: [],
    first_party: true,
    resource_identifiers: [],
    strict_introspection: false,
    allowed_origins: [],
    logo_uri: null,
    token_endpoint_auth_method: 'none',
    jwks: null,
    jwks_uri: null,
    id_token_signed_response_alg: null,
    userinfo_signed_response_alg: null,
    access_token_signed_response_alg: null,
    require_pkce: true,
    status: 'active',
    created_at: now,
    updated_at: now,
  };
  try {
    return await db.transaction(async (tx) => {
      const saved = await new TenantScope(tx, tenantId).clients.insert(row);
      await audit(
        tx,
        { type: 'system', id: spec.actorId },
        {
          tenantId,
          action: 'client.create',
          targetType: 'client',
          targetId: clientId,
          summary: { after: { client_id: clientId, name: row.name, redirect_uris: row.redirect_uris } },
        },
      );
      return saved;
    });
  } catch (e) {
    // Two first sign-ins at once: the other one created it.
    if (!isUniqueViolation(e)) throw e;
    return (await scope.clients.getByClientId(clientId)) ?? undefined;
  }
}

/** The S256 code challenge of a verifier (RFC 7636 §4.2). */
export const pkceChallenge = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');
