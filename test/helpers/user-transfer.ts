/** A tenant ready for the directory's import (claim schemas, an upstream provider), and a reading of its users. */
import { createHash } from 'node:crypto';
import type { Database } from '../../shared/db/index.js';
import { TenantScope } from '../../shared/repositories/index.js';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import type { ProvisioningService } from '../../shared/services/provisioning/index.js';
import { activeTenant } from './seed.js';

const actor = { type: 'system' as const, id: 'test' };
export const UPSTREAM_ISSUER = 'https://upstream.example.test/realms/corp';

/** An active upstream OIDC provider row, inserted as is (client `broker`, scopes openid email). */
export async function insertUpstreamIdp(
  ds: Database,
  tenantId: string,
  p: { id: string; slug: string; displayName: string; issuer: string; sealedSecret: string },
): Promise<void> {
  const now = Date.now();
  await new TenantScope(ds, tenantId).upstreamIdps.insert({
    id: p.id,
    slug: p.slug,
    display_name: p.displayName,
    issuer: p.issuer,
    issuer_hash: createHash('sha256').update(p.issuer).digest('base64url'),
    client_id: 'broker',
    client_secret_sealed: p.sealedSecret,
    secret_key_id: 'usk_test',
    scopes: 'openid email',
    link_by_verified_email: false,
    status: 'active',
    created_at: now,
    updated_at: now,
  });
}

/** An active tenant with claims department (string), roles (many strings), level (number) and an upstream provider. */
export async function importTenant(ds: Database, provisioning: ProvisioningService, name: string): Promise<string> {
  const tenant = await activeTenant(provisioning, { name }, actor);
  const claims = new CustomClaimsService(ds);
  for (const [field_key, field_type, cardinality] of [
    ['department', 'string', 'one'],
    ['roles', 'string', 'many'],
    ['level', 'number', 'one'],
  ])
    await claims.createSchema(tenant.id, { field_key, display_label: field_key, field_type, cardinality }, actor);
  await insertUpstreamIdp(ds, tenant.id, {
    id: `uip_${tenant.id.slice(-8)}`,
    slug: 'corp',
    displayName: 'Corp',
    issuer: UPSTREAM_ISSUER,
    sealedSecret: 'sealed-secret',
  });
  return tenant.id;
}

export interface DirectoryEntry {
  email: string;
  name: string;
  email_verified: boolean;
  claims: Record<string, unknown>;
  links: string[];
}

/** The tenant's users as the import writes them, sorted by email (read directly from the tables). */
export async function directoryOf(ds: Database, tenantId: string): Promise<DirectoryEntry[]> {
  const users = await ds.query<{ id: string; email: string; name: string; email_verified: number }[]>(
    'SELECT id, email, name, email_verified FROM users WHERE tenant_id = ? ORDER BY email',
    [tenantId],
  );
  const values = await ds.query<{ user_id: string; field_key: string; value_json: string }[]>(
    'SELECT user_id, field_key, value_json FROM custom_claim_values WHERE tenant_id = ?',
    [tenantId],
  );
  const links = await ds.query<{ user_id: string; upstream_iss: string; upstream_sub: string }[]>(
    'SELECT user_id, upstream_iss, upstream_sub FROM upstream_identity_links WHERE tenant_id = ? ORDER BY upstream_sub',
    [tenantId],
  );
  return users.map((u) => ({
    email: u.email,
    name: u.name,
    email_verified: Number(u.email_verified) === 1,
    claims: Object.fromEntries(
      values.filter((v) => v.user_id === u.id).map((v) => [v.field_key, JSON.parse(v.value_json)] as const),
    ),
    links: links.filter((l) => l.user_id === u.id).map((l) => `${l.upstream_iss} ${l.upstream_sub}`),
  }));
}
