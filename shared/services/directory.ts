/**
 * Tenants, clients and users: the directory the rest of the service builds on. Used by the
 * admin API and the `iam` CLI alike, so both validate and audit the same way. A tenant is
 * created by ProvisioningService.createTenant, with the operation that activates it.
 */
import { newClientId, newId, randomToken, SecretHasher } from '../crypto.js';
import type { Client, Tenant, User } from '../db/entities.js';
import { ApiError, badRequest, conflict, notFound } from '../errors.js';
import {
  Lookups,
  policyVersionsOf,
  TenantRepository,
  TenantScope,
  type PolicyVersions,
  type ResolvedClient,
} from '../repositories/index.js';
import { CreateClientInput, CreateUserInput, PolicyVersionsInput } from '../schemas/admin.js';
import {
  STANDARD_CLAIM_KEYS,
  StandardClaimScopesInput,
  type OptionalClaimScope,
  type StandardClaims,
} from '../schemas/standard-claims.js';
import { parseInput } from '../schemas/validate.js';
import { isUniqueViolation, type Database, type Db, type Tx } from '../db/index.js';
import { audit, type Actor } from './audit.js';
import { ISSUER_RESOURCE_MESSAGE, isIssuerUrl } from './resource-identifiers.js';
import { updateSettingsSection } from './tenant-settings.js';
import {
  enabledClaimScopes,
  isOptionalClaimScope,
  STANDARD_CLAIMS_SECTION,
  standardClaims,
  type ClaimsUser,
} from './standard-claims.js';

/** A client as the admin API and the CLI show one: its secrets are elsewhere, and never shown. */
export type ClientPublic = Omit<Client, 'tokens_revoked_before'>;
export const toClientView = ({ tokens_revoked_before: _w, ...rest }: Client): ClientPublic => rest;
export const toTenantView = ({ settings, ...rest }: Tenant) => ({
  ...rest,
  allow_signup: settings?.allowSignup === true,
});

/** A user as the admin API and the CLI show one: the columns, and the standard claims set, flat. */
export type UserPublic = Omit<User, 'standard_claims'> & StandardClaims;
export const toUserView = (u: User): UserPublic => {
  const { id, tenant_id, email, name, status, created_at, updated_at } = u;
  return {
    id,
    tenant_id,
    email,
    name,
    status,
    ...((u.standard_claims ?? {}) as StandardClaims),
    created_at,
    updated_at,
  };
};

/**
 * What a caller other than the admin API adds to a client's creation (dynamic registration,
 * docs/registration.md): columns the admin input has no field for, an expiry of the secret
 * (epoch ms), and work in the creation's own transaction (which may throw to undo it all).
 */
export interface ClientCreateExtension {
  fields?: Pick<Client, 'registered_via' | 'policy_uri' | 'tos_uri' | 'client_uri'>;
  secretExpiresAt?: number;
  within?: (tx: Tx, client: Client) => Promise<void>;
}

/** A client with its tenant's state, settings and look, as one OAuth lookup reads them. */
export type { ResolvedClient };

export class DirectoryService {
  private readonly hasher: SecretHasher;
  private readonly lookups: Lookups;
  constructor(
    private readonly ds: Database,
    secretKey: string,
    /** This service's issuer identifier (IAM_ISSUER): never a client's resource identifier. */
    private readonly issuer: string,
  ) {
    this.hasher = new SecretHasher(secretKey);
    this.lookups = new Lookups(ds);
  }

  scope(tenantId: string): TenantScope {
    return new TenantScope(this.ds, tenantId);
  }

  /**
   * The client a globally unique client_id names, with its tenant's state: the one lookup an
   * OAuth request makes before it knows its tenant. Callers check both states themselves.
   */
  resolveClient(clientId: string): Promise<ResolvedClient | null> {
    return this.lookups.clientByClientId(clientId);
  }

  /** Whether a registration read earlier is still current (Lookups.clientStamp). */
  clientStamp(clientId: string) {
    return this.lookups.clientStamp(clientId);
  }

  /**
   * Whether a web origin is registered for some active client of an active tenant: what a CORS
   * preflight, which names no client, is answered by (docs/oauth.md, "CORS").
   */
  isOriginRegistered(origin: string): Promise<boolean> {
    return this.lookups.originRegistered(origin);
  }

  async requireTenant(id: string): Promise<Tenant> {
    const t = await new TenantRepository(this.ds).get(id);
    if (!t) throw notFound(`Tenant ${id}`);
    return t;
  }

  listTenants(limit?: number, offset?: number): Promise<Tenant[]> {
    return new TenantRepository(this.ds).list({ limit, offset });
  }

  /**
   * Creates a client; a confidential client's secret is returned here once and stored hashed.
   * `where`: the prefix of field names in messages (`body` for the API, none for the CLI, which
   * names its flags instead).
   */
  async createClient(
    tenantId: string,
    input: unknown,
    actor: Actor,
    where = '',
    ext: ClientCreateExtension = {},
  ): Promise<{ client: ClientPublic; client_secret?: string }> {
    await this.requireTenant(tenantId);
    const c = parseInput(CreateClientInput, input, where);
    this.checkResourceIdentifiers(c.resource_identifiers, where);
    const now = Date.now();
    const method =
      c.token_endpoint_auth_method ??
      (c.public ? 'none' : c.jwks || c.jwks_uri ? 'private_key_jwt' : 'client_secret_basic');
    // A private_key_jwt client proves itself with its keys: it gets no secret to leak.
    const secret = c.public || method === 'private_key_jwt' ? undefined : randomToken(32);
    const row: Omit<Client, 'tenant_id'> = {
      id: newId('cli'),
      client_id: newClientId(),
      name: c.name,
      client_type: c.public ? 'public' : 'confidential',
      redirect_uris: [...new Set(c.redirect_uris)],
      grant_types: [...new Set(c.grant_types)],
      scopes: [...new Set(c.scopes)],
      audiences: [...new Set(c.audiences)],
      first_party: c.first_party,
      resource_identifiers: [...new Set(c.resource_identifiers)],
      strict_introspection: c.strict_introspection,
      allowed_origins: [...new Set(c.allowed_origins)],
      logo_uri: c.logo_uri ?? null,
      token_endpoint_auth_method: method,
      jwks: c.jwks ? { keys: c.jwks.keys } : null,
      jwks_uri: c.jwks_uri ?? null,
      id_token_signed_response_alg: c.id_token_signed_response_alg ?? null,
      userinfo_signed_response_alg: c.userinfo_signed_response_alg ?? null,
      access_token_signed_response_alg: c.access_token_signed_response_alg ?? null,
      authorization_signed_response_alg: c.authorization_signed_response_alg ?? null,
      introspection_signed_response_alg: c.introspection_signed_response_alg ?? null,
      require_pkce: c.require_pkce,
      require_pushed_authorization_requests: c.require_pushed_authorization_requests,
      require_signed_request_object: c.require_signed_request_object,
      fapi_profile: c.fapi_profile ?? null,
      ...ext.fields,
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    const client = await this.ds.transaction(async (em) => {
      const scope = new TenantScope(em, tenantId);
      const saved = await scope.clients.insert(row);
      // The secret's keyed hash goes to client_secrets (rotation, docs/directory.md "Clients").
      if (secret)
        await scope.clients.insertSecret({
          id: newId('csec'),
          clientId: saved.client_id,
          hash: this.hasher.hash(secret),
          createdAt: now,
        });
      if (secret && ext.secretExpiresAt)
        await scope.clients.expireLiveSecrets(saved.client_id, ext.secretExpiresAt, now);
      await ext.within?.(em, saved);
      const view = toClientView(saved);
      await audit(em, actor, {
        tenantId,
        action: 'client.create',
        targetType: 'client',
        targetId: saved.client_id,
        summary: { after: view },
      });
      return saved;
    });
    return { client: toClientView(client), ...(secret ? { client_secret: secret } : {}) };
  }

  async createUser(tenantId: string, input: unknown, actor: Actor): Promise<UserPublic> {
    await this.requireTenant(tenantId);
    const u = parseInput(CreateUserInput, input);
    const now = Date.now();
    const claims: StandardClaims = {};
    for (const k of STANDARD_CLAIM_KEYS) if (u[k] !== undefined) Object.assign(claims, { [k]: u[k] });
    try {
      return await this.ds.transaction(async (em) => {
        const user = await new TenantScope(em, tenantId).users.insert({
          id: newId('usr'),
          email: u.email,
          name: u.name,
          status: 'active',
          standard_claims: Object.keys(claims).length ? claims : null,
          created_at: now,
          updated_at: now,
        });
        // The audit summary names the user by id only: an email address is personal data.
        await audit(em, actor, { tenantId, action: 'user.create', targetType: 'user', targetId: user.id, summary: {} });
        return toUserView(user);
      });
    } catch (e) {
      if (isUniqueViolation(e))
        throw conflict(`A user with email ${u.email} already exists in this tenant.`, { field: 'email' });
      throw e;
    }
  }

  /**
   * Replaces the policy versions the tenant records with every consent from now on
   * (`settings.consentPolicy`; docs/oauth.md, "Consent records"). A version left out is
   * cleared; consents already given keep the versions they were given under. Audited.
   */
  async setPolicyVersions(tenantId: string, input: unknown, actor: Actor): Promise<PolicyVersions> {
    const v = parseInput(PolicyVersionsInput, input);
    const after: PolicyVersions = {
      ...(v.privacy_policy_version ? { privacyPolicyVersion: v.privacy_policy_version } : {}),
      ...(v.tos_version ? { tosVersion: v.tos_version } : {}),
    };
    return updateSettingsSection(
      this.ds,
      { tenantId, section: 'consentPolicy', action: 'tenant.policy_versions.update', actor },
      (settings) => ({ before: policyVersionsOf(settings), after }),
    );
  }

  /**
   * The optional claim scopes (`address`, `phone`, OIDC Core §5.4) the tenant offers; none by
   * default (docs/claims.md, "Standard claims"). A tenant that does not exist offers none.
   */
  async standardClaimScopes(tenantId: string, db: Db = this.ds): Promise<OptionalClaimScope[]> {
    return enabledClaimScopes(await new TenantRepository(db).settings(tenantId));
  }

  /**
   * The standard claims `scopes` release for `user` (OIDC Core §5.4), for the ID token and
   * UserInfo alike; the tenant's settings are read only when an optional scope is asked for
   * (through `db`, the grant's transaction when it issues in one).
   */
  async standardClaimsFor(user: ClaimsUser & { tenant_id: string }, scopes: readonly string[], db: Db = this.ds) {
    const offered = scopes.some(isOptionalClaimScope) ? await this.standardClaimScopes(user.tenant_id, db) : [];
    return standardClaims(user, scopes, offered);
  }

  /**
   * Replaces the optional claim scopes the tenant offers (`settings.standardClaims.scopes`).
   * Turning one off stops its claims at once, in tokens of grants given before too. Audited as
   * `tenant.standard_claims.update`.
   */
  async setStandardClaimScopes(tenantId: string, input: unknown, actor: Actor): Promise<OptionalClaimScope[]> {
    const { scopes } = parseInput(StandardClaimScopesInput, input);
    const after = await updateSettingsSection(
      this.ds,
      { tenantId, section: STANDARD_CLAIMS_SECTION, action: 'tenant.standard_claims.update', actor },
      (settings) => ({ before: { scopes: enabledClaimScopes(settings) }, after: { scopes: [...scopes].sort() } }),
    );
    return after.scopes;
  }

  /**
   * RFC 8707 §2: a resource identifier names a resource server. The issuer, its endpoints and
   * anything under it are this authorization server's own (shared/services/resource-identifiers.ts
   * says why a client must not claim them): 400 naming the field. Every write of
   * `resource_identifiers` goes through here.
   */
  checkResourceIdentifiers(values: readonly string[], where = ''): void {
    const issues = values.flatMap((v, i) =>
      isIssuerUrl(v, this.issuer)
        ? [{ field: [where, 'resource_identifiers', String(i)].filter(Boolean).join('.'), value: v }]
        : [],
    );
    if (!issues.length) return;
    const details = issues.map((x) => ({ field: x.field, message: ISSUER_RESOURCE_MESSAGE }));
    throw badRequest(
      `${issues[0].field}: ${ISSUER_RESOURCE_MESSAGE} (got ${JSON.stringify(issues[0].value)})`,
      details,
    );
  }

  /**
   * The live secret of `client` (neither revoked nor expired, read from the database now) that
   * `secret` is, or null. Every live secret is compared, each in constant time, so the time
   * taken does not say which one matched (RFC 6749 §2.3.1; during a rotation's overlap there
   * are two).
   */
  async verifyClientSecret(
    client: Pick<Client, 'tenant_id' | 'client_id'>,
    secret: string,
    now = Date.now(),
  ): Promise<{ id: string; expires_at: number | null } | null> {
    const live = await new TenantScope(this.ds, client.tenant_id).clients.liveSecrets(client.client_id, now);
    let match: { id: string; expires_at: number | null } | null = null;
    for (const s of live) if (this.hasher.verify(secret, s.secret_hash) && !match) match = s;
    return match && { id: match.id, expires_at: match.expires_at };
  }
}

export { ApiError };
