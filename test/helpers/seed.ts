/**
 * Seeds a database the way an operator would with the CLI (same services), so HTTP tests
 * have a tenant and an admin client to start from.
 */
import { loadConfig } from '../../shared/config.js';
import { connect, createDataSource, migrate } from '../../shared/db/data-source.js';
import { bindSecretKey } from '../../shared/services/secret-key.js';
import { DirectoryService } from '../../shared/services/directory.js';
import { KeyService } from '../../shared/services/keys.js';
import { createEmailProviders } from '../../shared/services/mail/index.js';
import { ProvisioningService } from '../../shared/services/provisioning/index.js';
import type { Actor } from '../../shared/services/audit.js';
import type { Tenant } from '../../shared/db/entities.js';
import { SCOPE_PLATFORM, SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { TEST_SECRET_KEY } from './db.js';

export interface Seeded {
  tenantId: string;
  platform: { clientId: string; secret: string };
  tenantAdmin: { clientId: string; secret: string };
}

/**
 * The services as the CLI builds them. No IAM_SMTP_URL here, so a tenant's mail goes to the
 * log provider, which needs no network: provisioning in-process never depends on a sink.
 */
export async function openServices(databaseUrl: string, dataDir: string) {
  const config = loadConfig({ IAM_DATABASE_URL: databaseUrl, IAM_SECRET_KEY: TEST_SECRET_KEY, IAM_DATA_DIR: dataDir });
  const ds = await connect(createDataSource(config.database));
  await migrate(ds);
  await bindSecretKey(ds, config.secretKey);
  const directory = new DirectoryService(ds, config.secretKey, config.issuer);
  const quiet = { info: () => undefined, warn: () => undefined };
  const provisioning = new ProvisioningService(ds, {
    directory,
    keys: new KeyService(ds, config.secretKey, config.keyRetireAfterSeconds),
    mail: createEmailProviders(config, quiet),
    options: { maxAttempts: config.provisioningMaxAttempts, retryBaseMs: config.provisioningRetryBaseMs },
  });
  return { ds, config, directory, provisioning };
}

/**
 * Creates a tenant and drives its provisioning to the end through the real runner, as
 * `iam tenants create` does; fails loudly if it does not complete.
 */
export async function activeTenant(
  provisioning: ProvisioningService,
  input: { name: string; allow_signup?: boolean },
  actor: Actor,
): Promise<Tenant> {
  const { tenant, operation } = await provisioning.createTenant(input, actor, { wait: { timeoutMs: 60_000 } });
  if (operation.status !== 'completed' || tenant.lifecycle_state !== 'active') {
    throw new Error(
      `tenant ${tenant.id} was not provisioned: ` +
        JSON.stringify({ status: operation.status, step: operation.current_step, error: operation.last_error_code }),
    );
  }
  return tenant;
}

/** A client_credentials client (a resource server, or a caller of one) and its credentials. */
export async function credentialsClient(
  directory: DirectoryService,
  tenantId: string,
  input: Record<string, unknown>,
  actor: Actor = { type: 'system', id: 'test' },
): Promise<{ clientId: string; secret: string }> {
  const c = await directory.createClient(tenantId, { grant_types: ['client_credentials'], ...input }, actor);
  return { clientId: c.client.client_id, secret: c.client_secret! };
}

/** The resource server most tests introspect with: audience https://api.example.test. */
export const TEST_API = { name: 'API', scopes: ['api'], resource_identifiers: ['https://api.example.test'] };

export async function seed(databaseUrl: string, dataDir: string): Promise<Seeded> {
  const { ds, directory, provisioning } = await openServices(databaseUrl, dataDir);
  try {
    const actor = { type: 'system' as const, id: 'test-seed' };
    const tenant = await activeTenant(provisioning, { name: 'Seed tenant' }, actor);
    const platform = await directory.createClient(
      tenant.id,
      { name: 'platform admin', grant_types: ['client_credentials'], scopes: [SCOPE_PLATFORM] },
      actor,
    );
    const admin = await directory.createClient(
      tenant.id,
      { name: 'tenant admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
      actor,
    );
    return {
      tenantId: tenant.id,
      platform: { clientId: platform.client.client_id, secret: platform.client_secret! },
      tenantAdmin: { clientId: admin.client.client_id, secret: admin.client_secret! },
    };
  } finally {
    await ds.destroy();
  }
}

export async function clientCredentialsToken(
  baseUrl: string,
  clientId: string,
  secret: string,
  scope?: string,
): Promise<string> {
  const res = await fetch(`${baseUrl}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization:
        'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token)
    throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** POST /introspect as a resource server (HTTP Basic, RFC 7662 §2.1). */
export async function introspectAs(
  baseUrl: string,
  caller: { clientId: string; secret: string },
  token: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization:
        'Basic ' +
        Buffer.from(`${encodeURIComponent(caller.clientId)}:${encodeURIComponent(caller.secret)}`).toString('base64'),
    },
    body: new URLSearchParams({ token }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
