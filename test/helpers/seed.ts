/**
 * Seeds a database the way an operator would with the CLI (same services), so HTTP tests
 * have a tenant and an admin client to start from.
 */
import { loadConfig } from '../../shared/config.js';
import { connect, createDataSource, migrate } from '../../shared/db/data-source.js';
import { bindSecretKey } from '../../shared/db/secret-key-check.js';
import { DirectoryService } from '../../shared/services/directory.js';
import { SCOPE_PLATFORM, SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { TEST_SECRET_KEY } from './db.js';

export interface Seeded {
  tenantId: string;
  platform: { clientId: string; secret: string };
  tenantAdmin: { clientId: string; secret: string };
}

export async function openServices(databaseUrl: string, dataDir: string) {
  const config = loadConfig({ IAM_DATABASE_URL: databaseUrl, IAM_SECRET_KEY: TEST_SECRET_KEY, IAM_DATA_DIR: dataDir });
  const ds = await connect(createDataSource(config.database));
  await migrate(ds);
  await bindSecretKey(ds, config.secretKey);
  return { ds, config, directory: new DirectoryService(ds, config.secretKey) };
}

export async function seed(databaseUrl: string, dataDir: string): Promise<Seeded> {
  const { ds, directory } = await openServices(databaseUrl, dataDir);
  try {
    const actor = { type: 'system' as const, id: 'test-seed' };
    const tenant = await directory.createTenant({ name: 'Seed tenant' }, actor);
    const platform = await directory.createClient(tenant.id, { name: 'platform admin', grant_types: ['client_credentials'], scopes: [SCOPE_PLATFORM] }, actor);
    const admin = await directory.createClient(tenant.id, { name: 'tenant admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] }, actor);
    return {
      tenantId: tenant.id,
      platform: { clientId: platform.client.client_id, secret: platform.client_secret! },
      tenantAdmin: { clientId: admin.client.client_id, secret: admin.client_secret! },
    };
  } finally {
    await ds.destroy();
  }
}

export async function clientCredentialsToken(baseUrl: string, clientId: string, secret: string, scope?: string): Promise<string> {
  const res = await fetch(`${baseUrl}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}
