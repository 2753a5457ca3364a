import { boolInt, jsonText, type Client } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { one } from '../db/sql.js';
import { toPendingExportRow, type PendingExportRow } from './exports.js';
import { toAuthCodeRow, toAuthRequestRow, type AuthCodeRow, type AuthRequestRow } from './authorization.js';
import { toArtifactRow, toSessionWithUser, type ArtifactRow, type SessionWithUser } from './sessions.js';
import { toRefreshTokenRow, type RefreshTokenRow } from './tokens.js';

/** The policy versions a tenant sets (`settings.consentPolicy`), recorded with each consent. */
export interface PolicyVersions {
  privacyPolicyVersion?: string;
  tosVersion?: string;
}

/**
 * What a client_id resolves to: the client, and the state, sign-up setting and policy versions
 * of its tenant.
 */
export interface ResolvedClient {
  client: Client;
  tenantState: string;
  allowSignup: boolean;
  policyVersions: PolicyVersions;
  /** The tenant's name and its settings' `branding` section as stored, so that the login pages
   * get their look from this one read (shared/services/branding.ts `brandingFrom`). */
  tenantName: string;
  brandingSection: unknown;
  /** The settings' `authorizationRequests` section as stored (docs/par.md: the tenant's PAR requirement). */
  authorizationRequestsSection?: unknown;
}

/** The policy versions of a tenant's settings document; what is not a non-empty string is absent. */
export function policyVersionsOf(settings: unknown): PolicyVersions {
  const p = (settings as { consentPolicy?: Record<string, unknown> } | null)?.consentPolicy ?? {};
  const v: PolicyVersions = {};
  if (typeof p.privacyPolicyVersion === 'string' && p.privacyPolicyVersion)
    v.privacyPolicyVersion = p.privacyPolicyVersion;
  if (typeof p.tosVersion === 'string' && p.tosVersion) v.tosVersion = p.tosVersion;
  return v;
}

/**
 * Lookups that cross tenants, each by a value presented before anyone knows its tenant: a
 * globally unique client_id, or (added per area) the hash of an unguessable cookie, code or
 * token. Each returns the tenant id; everything after it goes through that tenant's scope.
 * Nothing else in the data layer reads tenant-owned rows without a TenantScope.
 */
export class Lookups {
  constructor(private readonly db: Db) {}

  /**
   * OAuth clients present a globally unique client_id before their tenant is known. One
   * indexed join, no query builder: this runs on nearly every OAuth request.
   */
  async clientByClientId(clientId: string): Promise<ResolvedClient | null> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT c.id, c.tenant_id, c.client_id, c.name, c.client_type, c.redirect_uris, c.grant_types,
              c.scopes, c.audiences, c.first_party, c.status, c.resource_identifiers, c.strict_introspection,
              c.allowed_origins, c.logo_uri, c.token_endpoint_auth_method, c.jwks, c.jwks_uri,
              c.id_token_signed_response_alg, c.userinfo_signed_response_alg, c.access_token_signed_response_alg,
              c.authorization_signed_response_alg, c.introspection_signed_response_alg,
              c.require_pkce, c.require_pushed_authorization_requests, c.require_signed_request_object, c.fapi_profile,
              c.tokens_revoked_before, c.client_uri, c.registered_via, c.policy_uri, c.tos_uri,
              c.created_at, c.updated_at, t.lifecycle_state, t.settings,
              t.name AS tenant_name
         FROM clients c JOIN tenants t ON t.id = c.tenant_id WHERE c.client_id = ?`,
      [clientId],
    );
    if (!r) return null;
    const client: Client = {
      id: String(r.id),
      tenant_id: String(r.tenant_id),
      client_id: String(r.client_id),
      name: String(r.name),
      client_type: r.client_type as Client['client_type'],
      redirect_uris: jsonText.from(r.redirect_uris) as string[],
      grant_types: jsonText.from(r.grant_types) as string[],
      scopes: jsonText.from(r.scopes) as string[],
      audiences: jsonText.from(r.audiences) as string[],
      first_party: boolInt.from(r.first_party) as boolean,
      status: r.status as Client['status'],
      resource_identifiers:
        typeof r.resource_identifiers === 'string' ? (JSON.parse(r.resource_identifiers) as string[]) : [],
      strict_introspection: boolInt.from(r.strict_introspection) as boolean,
      allowed_origins: typeof r.allowed_origins === 'string' ? (JSON.parse(r.allowed_origins) as string[]) : [],
      logo_uri: typeof r.logo_uri === 'string' ? r.logo_uri : null,
      token_endpoint_auth_method: String(r.token_endpoint_auth_method) as Client['token_endpoint_auth_method'],
      jwks: typeof r.jwks === 'string' ? (JSON.parse(r.jwks) as Client['jwks']) : null,
      jwks_uri: typeof r.jwks_uri === 'string' ? r.jwks_uri : null,
      id_token_signed_response_alg: (r.id_token_signed_response_alg as Client['id_token_signed_response_alg']) ?? null,
      userinfo_signed_response_alg: (r.userinfo_signed_response_alg as Client['userinfo_signed_response_alg']) ?? null,
      access_token_signed_response_alg:
        (r.access_token_signed_response_alg as Client['access_token_signed_response_alg']) ?? null,
      authorization_signed_response_alg:
        (r.authorization_signed_response_alg as Client['authorization_signed_response_alg']) ?? null,
      introspection_signed_response_alg:
        (r.introspection_signed_response_alg as Client['introspection_signed_response_alg']) ?? null,
      require_pkce: boolInt.from(r.require_pkce) as boolean,
      require_pushed_authorization_requests: boolInt.from(r.require_pushed_authorization_requests) as boolean,
      require_signed_request_object: boolInt.from(r.require_signed_request_object) as boolean,
      fapi_profile: (r.fapi_profile as Client['fapi_profile']) ?? null,
      tokens_revoked_before:
        r.tokens_revoked_before === null || r.tokens_revoked_before === undefined
          ? null
          : Number(r.tokens_revoked_before),
      // What the consent page shows of a self-registered client (docs/client-metadata-documents.md).
      client_uri: typeof r.client_uri === 'string' ? r.client_uri : null,
      registered_via: (r.registered_via as Client['registered_via']) ?? null,
      policy_uri: typeof r.policy_uri === 'string' ? r.policy_uri : null,
      tos_uri: typeof r.tos_uri === 'string' ? r.tos_uri : null,
      created_at: Number(r.created_at),
      updated_at: Number(r.updated_at),
    };
    const settings = (jsonText.from(r.settings) ?? {}) as {
      allowSignup?: unknown;
      branding?: unknown;
      authorizationRequests?: unknown;
    };
    return {
      client,
      tenantState: String(r.lifecycle_state),
      allowSignup: settings.allowSignup === true,
      policyVersions: policyVersionsOf(settings),
      tenantName: String(r.tenant_name),
      brandingSection: settings.branding,
      authorizationRequestsSection: settings.authorizationRequests,
    };
  }

  /**
   * What says whether a registration read earlier is still current: the client's updated_at
   * (raised by every change of it or of its secrets), its state and its tenant's. Introspection's
   * Basic fast path asks this on every request (daemon/routes/oauth/introspect.ts), so no
   * daemon keeps honouring a secret another one revoked. Undefined: no such client now.
   */
  async clientStamp(clientId: string): Promise<{ updatedAt: number; status: string; tenantState: string } | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT c.updated_at, c.status, t.lifecycle_state
         FROM clients c JOIN tenants t ON t.id = c.tenant_id WHERE c.client_id = ?`,
      [clientId],
    );
    if (!r) return undefined;
    return { updatedAt: Number(r.updated_at), status: String(r.status), tenantState: String(r.lifecycle_state) };
  }

  /**
   * Whether `origin` is registered (allowed_origins) for an active client of an active tenant:
   * what a CORS preflight, which carries no client_id, is answered by (docs/oauth.md, "CORS").
   * A yes or no, never a tenant's rows.
   */
  async originRegistered(origin: string): Promise<boolean> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT 1 AS found FROM client_origins o
         JOIN clients c ON c.tenant_id = o.tenant_id AND c.client_id = o.client_id
         JOIN tenants t ON t.id = o.tenant_id
        WHERE o.origin = ? AND c.status = 'active' AND t.lifecycle_state = 'active'
        LIMIT 1`,
      [origin],
    );
    return r !== undefined;
  }

  /**
   * The unrevoked browser session whose cookie value hashes to `hash` (the cookie is all a
   * browser presents), with its user and the state of its tenant: one indexed join, as it
   * runs on every signed-in request.
   */
  async sessionByCookieHash(hash: string): Promise<SessionWithUser | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT s.id, s.tenant_id, s.user_id, s.created_at, s.expires_at, s.auth_time, s.acr, s.amr, s.user_agent,
              s.last_seen_at, u.email, u.name, u.status, t.lifecycle_state, t.settings
         FROM sessions s JOIN users u ON u.id = s.user_id AND u.tenant_id = s.tenant_id
         JOIN tenants t ON t.id = s.tenant_id
        WHERE s.id = ? AND s.revoked_at IS NULL`,
      [hash],
    );
    return r ? toSessionWithUser(r) : undefined;
  }

  /** The direct-auth artifact that hashes to `hash` (presented by the app that received it). */
  async artifactByHash(hash: string): Promise<ArtifactRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT id, tenant_id, client_id, user_id, channel, provider_id, code_challenge, auth_request_id, auth_time, amr,
              acr, passkey_id, expires_at, consumed_at
         FROM direct_auth_artifacts WHERE id = ?`,
      [hash],
    );
    return r ? toArtifactRow(r) : undefined;
  }

  /**
   * An authorization request by its id: a random value, handed to the browser as the login
   * form's challenge (or to a first-party app as its authorization_challenge_id).
   */
  async authRequestById(id: string): Promise<AuthRequestRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      'SELECT tenant_id, params, expires_at, consumed_at FROM auth_requests WHERE id = ?',
      [id],
    );
    return r ? toAuthRequestRow(r) : undefined;
  }

  /** The authorization code that hashes to `hash` (presented at the token endpoint). */
  async authCodeByHash(hash: string): Promise<AuthCodeRow | undefined> {
    const r = await one<Record<string, unknown>>(this.db, 'SELECT * FROM auth_codes WHERE id = ?', [hash]);
    return r ? toAuthCodeRow(r) : undefined;
  }

  /** The refresh token that hashes to `hash` (presented at the token or revocation endpoint). */
  async refreshTokenByHash(hash: string): Promise<RefreshTokenRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      'SELECT id, tenant_id, family_id, expires_at, consumed_at FROM refresh_tokens WHERE id = ?',
      [hash],
    );
    return r ? toRefreshTokenRow(r) : undefined;
  }

  /**
   * The oldest pending data export of any tenant: the `data-export` job's queue, served oldest
   * first. The job builds and records it through the returned tenant's scope.
   */
  async oldestPendingExport(): Promise<PendingExportRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT id, tenant_id, user_id, format, sections FROM data_exports
        WHERE status = ? ORDER BY created_at, id LIMIT 1`,
      ['pending'],
    );
    return r ? toPendingExportRow(r) : undefined;
  }

  /**
   * The tenant of the pending upstream authorization request whose `state` hashes to `hash`:
   * the upstream's redirect back to /login/upstream/callback carries only the state.
   */
  async upstreamLoginStateTenant(hash: string): Promise<string | undefined> {
    const r = await one<{ tenant_id: string }>(
      this.db,
      'SELECT tenant_id FROM upstream_login_states WHERE state_hash = ?',
      [hash],
    );
    return r ? String(r.tenant_id) : undefined;
  }
}
