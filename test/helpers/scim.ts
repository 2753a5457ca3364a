/**
 * The SCIM tests' daemon: one tenant, a client_credentials client holding `scim` (the IdP's
 * connection) and a tenant admin, and a call helper speaking application/scim+json.
 */
import { SCOPE_SCIM, SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { api, type ApiAnswer } from './api.js';
import { startDaemon, type Daemon } from './daemon.js';
import { createTestDatabase, type TestDb } from './db.js';
import { activeTenant, clientCredentialsToken, credentialsClient, openServices } from './seed.js';

export const SCIM_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCIM_ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const SCIM_PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const SCIM_LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimEnv {
  db: TestDb;
  d: Daemon;
  tenantId: string;
  /** A token with the scope scim. */
  token: string;
  /** A tenant admin's token (iam.admin): refused by /scim/v2. */
  adminToken: string;
  /** The client_id of the client holding scim, and of the tenant admin. */
  idpClientId: string;
  adminClientId: string;
  scim: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiAnswer>;
  stop: () => Promise<void>;
}

export async function startScim(): Promise<ScimEnv> {
  const db = await createTestDatabase();
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  let tenantId: string;
  let idp: { clientId: string; secret: string };
  let admin: { clientId: string; secret: string };
  try {
    const actor = { type: 'system' as const, id: 'test-seed' };
    tenantId = (await activeTenant(provisioning, { name: 'SCIM tenant' }, actor)).id;
    idp = await credentialsClient(directory, tenantId, { name: 'Okta', scopes: [SCOPE_SCIM] });
    admin = await credentialsClient(directory, tenantId, { name: 'admin', scopes: [SCOPE_TENANT_ADMIN] });
  } finally {
    await ds.destroy();
  }
  const d = await startDaemon(db.url, db.dir);
  const token = await clientCredentialsToken(d.url, idp.clientId, idp.secret, SCOPE_SCIM);
  const adminToken = await clientCredentialsToken(d.url, admin.clientId, admin.secret);
  const scim = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(d.url, method, `/scim/v2${path}`, {
      token,
      ...(body === undefined ? {} : { raw: JSON.stringify(body) }),
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }), ...headers },
    });
  return {
    db,
    d,
    tenantId,
    token,
    adminToken,
    idpClientId: idp.clientId,
    adminClientId: admin.clientId,
    scim,
    stop: async () => {
      await d.stop();
      await db.drop();
    },
  };
}
