/**
 * Admin scopes. The full table of which endpoint needs which scope is docs/scopes.md.
 * - iam.platform: a platform operator; acts on every tenant.
 * - iam.admin: a tenant administrator; confined to the tenant its client belongs to.
 */
export const SCOPE_PLATFORM = 'iam.platform';
export const SCOPE_TENANT_ADMIN = 'iam.admin';
/**
 * Every admin scope, the one list: a scope added here is at once refused on a client that has
 * any grant but client_credentials (shared/schemas/admin.ts), refused at /authorize, never
 * shown on the consent page, and accepted by the admin API only in a client_credentials token
 * (daemon/middleware/koa-bearer.ts). Admin callers are services, never end users
 * (docs/scopes.md).
 */
export const ADMIN_SCOPES = [SCOPE_PLATFORM, SCOPE_TENANT_ADMIN];

/**
 * SCIM 2.0 provisioning (`/scim/v2/…`, docs/scim.md): an identity provider's directory pushing
 * users and groups into the token's tenant. An admin scope for every rule above (refused on a
 * client with another grant, at /authorize, on the consent page), but not in ADMIN_SCOPES,
 * which is also the list the admin API accepts: a SCIM token reaches only /scim/v2.
 */
export const SCOPE_SCIM = 'scim';

/** The scopes only a client_credentials client may hold: ADMIN_SCOPES and `scim`. */
const SERVICE_ONLY_SCOPES = [...ADMIN_SCOPES, SCOPE_SCIM];

/** Whether `scope` is an admin scope (ADMIN_SCOPES, or `scim`): only for client_credentials clients. */
export function isAdminScope(scope: string): boolean {
  return SERVICE_ONLY_SCOPES.includes(scope);
}

/**
 * OIDC Core §11: asks for a refresh token that works while the user is away. A client with the
 * refresh_token grant may ask for it without registering it among its scopes (docs/oauth.md,
 * "Refresh tokens and offline_access").
 */
export const SCOPE_OFFLINE_ACCESS = 'offline_access';

/** The scopes `client` may ask for at /authorize: its registered ones, and offline_access with refresh_token. */
export function requestableScope(client: { scopes: string[]; grant_types: string[] }, scope: string): boolean {
  return (
    client.scopes.includes(scope) || (scope === SCOPE_OFFLINE_ACCESS && client.grant_types.includes('refresh_token'))
  );
}

/**
 * The account API (`/api/user/…`: the data export, every consent and its withdrawal) in a
 * user's access token. Only a first-party client gets it (docs/scopes.md, "The account
 * scope"): a third-party client's token reaches only that client's own consent. A client
 * registers it like any scope (`scopes`), and registration refuses it on a third-party client.
 */
export const SCOPE_ACCOUNT = 'account';

/**
 * Whether `scope`, requested and registered, may be granted to `client`: everything but
 * `account` on a third-party client. RFC 6749 §3.3 lets the authorization server issue fewer
 * scopes than requested; /authorize and the token exchange drop such a scope rather than refuse
 * the request (node-oidc-provider does the same with scopes a client may not have), and the
 * token response's `scope` names what was granted.
 */
export function grantableScope(client: { first_party: boolean }, scope: string): boolean {
  return scope !== SCOPE_ACCOUNT || client.first_party;
}
