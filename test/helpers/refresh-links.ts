/**
 * Upstream providers and links for the token refresh tests, written through the upstream
 * identity provider repositories (as the sign-in does) with tokens the real upstream issued,
 * sealed with the service's sealing helper; and raw reads of a link row, to check what is at rest.
 */
import { createHash } from 'node:crypto';
import type { Database } from '../../shared/db/index.js';
import { newId } from '../../shared/crypto.js';
import { TenantScope } from '../../shared/repositories/index.js';
import { UpstreamSealer } from '../../shared/services/upstream-idp/index.js';
import { TEST_SECRET_KEY } from './db.js';
import type { RefreshUpstream, UpstreamTokens } from './refresh-upstream.js';

export const sealer = new UpstreamSealer(TEST_SECRET_KEY);

/** Registers `up` as an active upstream provider of the tenant; its id. */
export async function registerUpstream(
  ds: Database,
  tenantId: string,
  up: Pick<RefreshUpstream, 'issuer' | 'clientId' | 'clientSecret'>,
  status: 'active' | 'disabled' = 'active',
): Promise<string> {
  const id = newId('uip');
  const now = Date.now();
  await new TenantScope(ds, tenantId).upstreamIdps.insert({
    id,
    slug: `up-${id.slice(-6).toLowerCase()}`,
    display_name: 'Upstream',
    issuer: up.issuer,
    issuer_hash: createHash('sha256').update(up.issuer).digest('hex'),
    client_id: up.clientId,
    client_secret_sealed: sealer.seal(up.clientSecret, 'upstream_identity_providers.client_secret_sealed', id),
    secret_key_id: sealer.keyId,
    scopes: 'openid',
    link_by_verified_email: false,
    status,
    created_at: now,
    updated_at: now,
  });
  return id;
}

/** Links a user to an upstream subject with the upstream's tokens; the link id. */
export async function linkUser(
  ds: Database,
  p: {
    tenantId: string;
    providerId: string;
    userId: string;
    upstream: Pick<RefreshUpstream, 'issuer'>;
    sub: string;
    tokens: UpstreamTokens;
    accessExpiresAt: number | null;
  },
): Promise<string> {
  const id = newId('uil');
  const now = Date.now();
  const sealed = sealer.sealLinkTokens(id, {
    accessToken: p.tokens.access_token,
    refreshToken: p.tokens.refresh_token,
    idToken: p.tokens.id_token ?? null,
    accessExpiresAt: p.accessExpiresAt,
  });
  await new TenantScope(ds, p.tenantId).upstreamLinks.insert({
    id,
    provider_id: p.providerId,
    user_id: p.userId,
    upstream_iss: p.upstream.issuer,
    upstream_sub: p.sub,
    ...sealed,
    state: 'active',
    lease_holder: null,
    lease_until: null,
    last_refreshed_at: null,
    refresh_failures: 0,
    last_error_code: null,
    created_at: now,
    updated_at: now,
  });
  return id;
}

export type RawLink = Record<string, unknown> & {
  id: string;
  key_id: string;
  access_token_sealed: string;
  refresh_token_sealed: string | null;
  id_token_sealed: string | null;
};

/** The link row exactly as stored, numbers normalised (mysql2 returns BIGINT as strings). */
export async function rawLink(ds: Database, tenantId: string, id: string): Promise<RawLink> {
  const [row] = await ds.query<Record<string, unknown>[]>(
    'SELECT * FROM upstream_identity_links WHERE tenant_id = ? AND id = ?',
    [tenantId, id],
  );
  if (!row) throw new Error(`no link ${id}`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row))
    out[k] = typeof v === 'string' && /^\d+$/.test(v) && k !== 'id' ? Number(v) : v;
  return out as RawLink;
}

/** Sets columns of a link directly (making it due again, or rotating it as another daemon would). */
export async function setLink(ds: Database, tenantId: string, id: string, set: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(set);
  await ds.query(
    `UPDATE upstream_identity_links SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE tenant_id = ? AND id = ?`,
    [...cols.map((c) => set[c]), tenantId, id],
  );
}

/** A token of a raw link row, opened. */
export function openLinkToken(_tenantId: string, row: RawLink, which: 'access' | 'refresh' | 'id'): string {
  const t = sealer.openLinkTokens(row);
  const v = which === 'access' ? t.accessToken : which === 'refresh' ? t.refreshToken : t.idToken;
  if (v === null) throw new Error(`link ${row.id} has no ${which} token`);
  return v;
}
