/**
 * Entity definitions. EntitySchema with explicit column types, because the compiler used here
 * does not need to emit decorator metadata for them to work, and the schema is migrations'
 * business, never `synchronize`.
 */
import { EntitySchema, type ValueTransformer } from 'typeorm';

/** mysql2 may hand BIGINT back as a string; the domain works in numbers (epoch ms fit in 2^53). */
export const bigintNumber: ValueTransformer = {
  to: (v: unknown) => v,
  from: (v: unknown) => (v === null || v === undefined ? v : Number(v)),
};

/** JSON held in a TEXT column, identical on both dialects. */
export const jsonText: ValueTransformer = {
  to: (v: unknown) => (v === undefined ? undefined : v === null ? null : JSON.stringify(v)),
  from: (v: unknown): unknown => (typeof v === 'string' ? (JSON.parse(v) as unknown) : (v ?? null)),
};

/** Booleans are stored as 0/1 on both dialects. */
export const boolInt: ValueTransformer = {
  to: (v: unknown) => (v === undefined ? undefined : v ? 1 : 0),
  from: (v: unknown) => v === 1 || v === true || v === '1',
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonObject = { [key: string]: any };

const ts = (nullable = false) => ({ type: 'bigint' as const, nullable, transformer: bigintNumber });
const json = () => ({ type: 'text' as const, transformer: jsonText });

/**
 * `pending_deletion` (offboarded, restorable until `purge_after`), `purging` (the purge job is
 * deleting its rows; no way back) and `deleted` (the tombstone the purge leaves): see
 * docs/tenant-lifecycle.md, "Offboarding".
 */
export type TenantLifecycleState =
  'provisioning' | 'active' | 'suspended' | 'recovering' | 'pending_deletion' | 'purging' | 'deleted';

export interface Tenant {
  id: string;
  name: string;
  lifecycle_state: TenantLifecycleState;
  settings: JsonObject;
  created_at: number;
  updated_at: number;
  /**
   * When a `pending_deletion` tenant is due for the purge (epoch ms); null otherwise. Read by
   * the directory's statements (repositories/tenant-directory.ts), not mapped on the entity, so
   * the views built from a mapped row (`toTenantView`) do not change shape.
   */
  purge_after?: number | null;
  /** The state a restore takes an offboarded tenant back to; null when not offboarded. */
  offboarded_from?: string | null;
}

export const TenantEntity = new EntitySchema<Tenant>({
  name: 'Tenant',
  tableName: 'tenants',
  columns: {
    id: { type: 'varchar', length: 40, primary: true },
    name: { type: 'varchar', length: 200 },
    lifecycle_state: { type: 'varchar', length: 32 },
    settings: json(),
    created_at: ts(),
    updated_at: ts(),
  },
});

export type ClientType = 'confidential' | 'public';

/** A JSON list in a nullable TEXT column added by a later migration: NULL reads as empty. */
const jsonListOrEmpty: ValueTransformer = {
  to: (v: unknown) => (v === undefined ? undefined : JSON.stringify(v ?? [])),
  from: (v: unknown): unknown => (typeof v === 'string' ? (JSON.parse(v) as unknown) : []),
};

export interface Client {
  id: string;
  tenant_id: string;
  client_id: string;
  name: string;
  client_type: ClientType;
  redirect_uris: string[];
  grant_types: string[];
  scopes: string[];
  audiences: string[];
  first_party: boolean;
  status: 'active' | 'disabled';
  /** As a resource server: the audiences it serves (what introspection checks under strict validation). */
  resource_identifiers: string[];
  /** Introspection by this client answers active only for tokens addressed to it. */
  strict_introspection: boolean;
  /** Web origins (scheme://host[:port]) whose scripts may read this client's /token, /revoke and /userinfo answers. */
  allowed_origins: string[];
  /** An https URL of the client's logo (OIDC Dynamic Client Registration §2), or null. */
  logo_uri: string | null;
  /** A human-readable description (agent-writable metadata, docs/agents.md); null when none. */
  description?: string | null;
  /** The client's home page, an https URL (OIDC Dynamic Client Registration §2 `client_uri`), or null. */
  client_uri?: string | null;
  /**
   * How the client came to be: `dynamic` (RFC 7591, docs/registration.md), `metadata_document`
   * (a client ID metadata document); undefined or null: the admin API or the CLI.
   */
  registered_via?: 'admin' | 'dynamic' | 'metadata_document' | null;
  /** RFC 7591 §2 `policy_uri`: the app's privacy policy, as the app states it; null when none. */
  policy_uri?: string | null;
  /** RFC 7591 §2 `tos_uri`: the app's terms of service, as the app states it; null when none. */
  tos_uri?: string | null;
  /** The one client authentication method it uses at /token, /revoke and /introspect (docs/oauth.md). */
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  /** private_key_jwt: its public keys (a JWK Set), or null when they are at `jwks_uri`. */
  jwks: { keys: object[] } | null;
  /** private_key_jwt: an https URL serving its JWK Set, fetched and cached at runtime. */
  jwks_uri: string | null;
  /** OIDC Registration §2: the ID token's JWS algorithm; null is the service's default, ES256. */
  id_token_signed_response_alg: SigningAlgName | null;
  /** OIDC Registration §2: a signed UserInfo response (`application/jwt`) with this algorithm; null is plain JSON. */
  userinfo_signed_response_alg: SigningAlgName | null;
  /** The access token's JWS algorithm (docs/oauth.md, "Signing algorithms"); null is the default, ES256. */
  access_token_signed_response_alg: SigningAlgName | null;
  /** JARM §3: the JWS algorithm of its JWT authorization responses; null is the default, ES256 (docs/jarm.md). */
  authorization_signed_response_alg?: SigningAlgName | null;
  /** RFC 9701 §6: /introspect answers it with a JWT signed with it; null: JSON unless asked (docs/jarm.md). */
  introspection_signed_response_alg?: SigningAlgName | null;
  /**
   * Whether /authorize demands PKCE of this client. Always true for a public client; a
   * confidential client may be registered without it (docs/oauth.md, "PKCE").
   */
  require_pkce: boolean;
  /** RFC 9126 §6: /authorize accepts only a pushed request (`request_uri`) from it (docs/par.md). */
  require_pushed_authorization_requests?: boolean;
  /** RFC 9101 §10.5: /authorize accepts only a signed request object from it (docs/par.md). */
  require_signed_request_object?: boolean;
  /** The client's FAPI 2.0 profile (docs/fapi.md); null follows its tenant's `fapi` section. */
  fapi_profile?: 'off' | 'fapi2-security' | 'fapi2-message-signing' | null;
  /**
   * Seconds: the client's access tokens issued at or before it (`iat`) are inactive (a disable,
   * docs/directory.md "Clients"); null when none were revoked so. Its secrets are in
   * `client_secrets` (shared/repositories/client-secrets.ts), never on this row.
   */
  tokens_revoked_before?: number | null;
  created_at: number;
  updated_at: number;
}

/** JWS algorithms a client may register for the tokens it receives (shared/services/keys.ts SIGNING_ALGORITHMS). */
export type SigningAlgName = 'ES256' | 'RS256' | 'PS256' | 'EdDSA';

/** OIDC Dynamic Client Registration §2 `token_endpoint_auth_method` values this service supports. */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

export const ClientEntity = new EntitySchema<Client>({
  name: 'Client',
  tableName: 'clients',
  columns: {
    id: { type: 'varchar', length: 40, primary: true },
    tenant_id: { type: 'varchar', length: 40 },
    client_id: { type: 'varchar', length: 128 },
    name: { type: 'varchar', length: 200 },
    client_type: { type: 'varchar', length: 16 },
    redirect_uris: json(),
    grant_types: json(),
    scopes: json(),
    audiences: json(),
    first_party: { type: 'integer', transformer: boolInt },
    status: { type: 'varchar', length: 16 },
    resource_identifiers: { type: 'text', nullable: true, transformer: jsonListOrEmpty },
    strict_introspection: { type: 'integer', transformer: boolInt },
    allowed_origins: { type: 'text', nullable: true, transformer: jsonListOrEmpty },
    logo_uri: { type: 'varchar', length: 2048, nullable: true },
    description: { type: 'varchar', length: 1000, nullable: true },
    client_uri: { type: 'varchar', length: 2048, nullable: true },
    registered_via: { type: 'varchar', length: 24, nullable: true },
    policy_uri: { type: 'varchar', length: 2048, nullable: true },
    tos_uri: { type: 'varchar', length: 2048, nullable: true },
    token_endpoint_auth_method: { type: 'varchar', length: 32 },
    jwks: {
      type: 'text',
      nullable: true,
      transformer: {
        to: (v: unknown) => (v === undefined ? undefined : v === null ? null : JSON.stringify(v)),
        from: (v: unknown): unknown => (typeof v === 'string' ? (JSON.parse(v) as unknown) : null),
      },
    },
    jwks_uri: { type: 'varchar', length: 2048, nullable: true },
    id_token_signed_response_alg: { type: 'varchar', length: 16, nullable: true },
    userinfo_signed_response_alg: { type: 'varchar', length: 16, nullable: true },
    access_token_signed_response_alg: { type: 'varchar', length: 16, nullable: true },
    authorization_signed_response_alg: { type: 'varchar', length: 16, nullable: true },
    introspection_signed_response_alg: { type: 'varchar', length: 16, nullable: true },
    require_pkce: { type: 'integer', transformer: boolInt },
    // The migration's DEFAULT 0 for a row written without the field (the service's own pages' clients).
    require_pushed_authorization_requests: { type: 'integer', transformer: boolInt, default: 0 },
    require_signed_request_object: { type: 'integer', transformer: boolInt, default: 0 },
    fapi_profile: { type: 'varchar', length: 32, nullable: true },
    tokens_revoked_before: ts(true),
    created_at: ts(),
    updated_at: ts(),
  },
});

export interface User {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  status: 'active' | 'disabled';
  /** OIDC Core §5.1 standard claims beyond name and email (shared/schemas/standard-claims.ts); null: none. */
  standard_claims?: JsonObject | null;
  created_at: number;
  updated_at: number;
}

export const UserEntity = new EntitySchema<User>({
  name: 'User',
  tableName: 'users',
  columns: {
    id: { type: 'varchar', length: 40, primary: true },
    tenant_id: { type: 'varchar', length: 40 },
    email: { type: 'varchar', length: 320 },
    name: { type: 'varchar', length: 200 },
    status: { type: 'varchar', length: 16 },
    standard_claims: { type: 'text', nullable: true, transformer: jsonText },
    created_at: ts(),
    updated_at: ts(),
  },
});

export type SigningKeyStatus = 'active' | 'retiring' | 'retired';

export interface SigningKey {
  kid: string;
  alg: string;
  status: SigningKeyStatus;
  public_jwk: JsonObject;
  private_jwk_sealed: string;
  created_at: number;
  /** Set on rotation: the key stays in the JWKS until then, covering tokens it signed. */
  retire_at: number | null;
  updated_at: number;
}

export const SigningKeyEntity = new EntitySchema<SigningKey>({
  name: 'SigningKey',
  tableName: 'signing_keys',
  columns: {
    kid: { type: 'varchar', length: 64, primary: true },
    alg: { type: 'varchar', length: 16 },
    status: { type: 'varchar', length: 16 },
    public_jwk: json(),
    private_jwk_sealed: { type: 'text' },
    created_at: ts(),
    retire_at: ts(true),
    updated_at: ts(),
  },
});

export interface AuditEvent {
  id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string;
  outcome: 'success' | 'failure';
  request_id: string | null;
  summary: JsonObject;
  created_at: number;
}

export const AuditEventEntity = new EntitySchema<AuditEvent>({
  name: 'AuditEvent',
  tableName: 'audit_events',
  columns: {
    id: { type: 'varchar', length: 40, primary: true },
    tenant_id: { type: 'varchar', length: 40, nullable: true },
    actor_type: { type: 'varchar', length: 32 },
    actor_id: { type: 'varchar', length: 128 },
    action: { type: 'varchar', length: 64 },
    target_type: { type: 'varchar', length: 32 },
    target_id: { type: 'varchar', length: 128 },
    outcome: { type: 'varchar', length: 16 },
    request_id: { type: 'varchar', length: 64, nullable: true },
    summary: json(),
    created_at: ts(),
  },
});

export const entities = [TenantEntity, ClientEntity, UserEntity, SigningKeyEntity, AuditEventEntity];
