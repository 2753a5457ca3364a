/**
 * A client's life after registration (docs/directory.md, "Clients"): read with a strong ETag,
 * edit under the registration's own rules, rotate its secret with an overlap, disable, enable,
 * delete. Each change is one transaction with its audit event, naming the actor and never a
 * secret. Secrets live in `client_secrets` as keyed hashes; the value is shown once, at creation.
 *
 * What "stops working at once, on every daemon" rests on: client authentication reads the live
 * secrets on each /token, /revoke and /introspect call (introspection's Basic fast path checks
 * the client's stamp on each call, Lookups.clientStamp); every change here raises the client's
 * updated_at; a disable revokes the client's families, deletes its codes and sets the
 * access-token watermark that introspection and the bearer checks read with each token.
 */
import { createHash } from 'node:crypto';
import { newId, randomToken, SecretHasher } from '../crypto.js';
import type { Client } from '../db/entities.js';
import type { Database, Tx } from '../db/index.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { TenantScope } from '../repositories/index.js';
import { CreateClientInput } from '../schemas/admin.js';
import { AddClientSecretInput, PatchClientInput } from '../schemas/clients.js';
import { parseInput } from '../schemas/validate.js';
import { ifMatchSatisfied } from './agents/terms.js';
import { audit, type Actor } from './audit.js';
import { canonicalize } from './federation/jcs.js';
import { toClientView, type ClientPublic, type DirectoryService } from './directory.js';

/** The methods that authenticate with a secret: the only clients a secret is added to. */
const SECRET_METHODS: ReadonlySet<string> = new Set(['client_secret_basic', 'client_secret_post']);

/** The fields a PATCH writes (docs/directory.md, "Clients"). */
const EDITABLE = [
  'name',
  'redirect_uris',
  'allowed_origins',
  'scopes',
  'grant_types',
  'first_party',
  'token_endpoint_auth_method',
  'jwks',
  'jwks_uri',
  'logo_uri',
  'authorization_signed_response_alg',
  'introspection_signed_response_alg',
  'require_pushed_authorization_requests',
  'require_signed_request_object',
  'fapi_profile',
] as const;

/**
 * A strong entity tag (RFC 9110 §8.8.3) of the client as GET shows it, updated_at aside (a
 * secret rotation raises it and changes nothing shown): any change of a shown field changes it.
 */
export function clientEtag(c: ClientPublic): string {
  const { updated_at: _u, ...shown } = c;
  return `"${createHash('sha256').update(canonicalize(shown)).digest('base64url').slice(0, 32)}"`;
}

/** The registration's fields as CreateClientInput takes them, from the stored row. */
function asRegistration(c: Client): Record<string, unknown> {
  const opt = <T>(v: T | null | undefined) => (v === null ? undefined : v);
  return {
    name: c.name,
    redirect_uris: c.redirect_uris,
    grant_types: c.grant_types,
    scopes: c.scopes,
    audiences: c.audiences,
    public: c.client_type === 'public',
    first_party: c.first_party,
    resource_identifiers: c.resource_identifiers,
    strict_introspection: c.strict_introspection,
    allowed_origins: c.allowed_origins,
    logo_uri: opt(c.logo_uri),
    token_endpoint_auth_method: c.token_endpoint_auth_method,
    jwks: opt(c.jwks),
    jwks_uri: opt(c.jwks_uri),
    id_token_signed_response_alg: opt(c.id_token_signed_response_alg),
    userinfo_signed_response_alg: opt(c.userinfo_signed_response_alg),
    access_token_signed_response_alg: opt(c.access_token_signed_response_alg),
    authorization_signed_response_alg: opt(c.authorization_signed_response_alg),
    introspection_signed_response_alg: opt(c.introspection_signed_response_alg),
    require_pkce: c.require_pkce,
    require_pushed_authorization_requests: c.require_pushed_authorization_requests ?? false,
    require_signed_request_object: c.require_signed_request_object ?? false,
    fapi_profile: c.fapi_profile ?? null,
  };
}

export interface ClientSecretInfo {
  id: string;
  created_at: number;
  expires_at: number | null;
}

export class ClientLifecycleService {
  private readonly hasher: SecretHasher;
  constructor(
    private readonly ds: Database,
    secretKey: string,
    private readonly directory: DirectoryService,
  ) {
    this.hasher = new SecretHasher(secretKey);
  }

  /** The client `ref` (its client_id or row id) names in this tenant, or 404 (another tenant's too). */
  private async load(tx: Database | Tx, tenantId: string, ref: string): Promise<Client> {
    const clients = new TenantScope(tx, tenantId).clients;
    const c = (await clients.getByClientId(ref)) ?? (await clients.get(ref));
    if (!c) throw notFound(`Client ${ref}`);
    return c;
  }

  async get(tenantId: string, ref: string): Promise<{ client: ClientPublic; etag: string }> {
    await this.directory.requireTenant(tenantId);
    const client = toClientView(await this.load(this.ds, tenantId, ref));
    return { client, etag: clientEtag(client) };
  }

  /**
   * Edits the registration: the request is merged into the stored registration and the result
   * validated by CreateClientInput, exactly as a registration is (400 naming the field, under
   * `where`). `ifMatch`, when given, is compared in the write transaction (412, RFC 9110 §13.1.1).
   */
  async update(
    tenantId: string,
    ref: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string; within?: (tx: Tx, client: Client) => Promise<void> } = {},
  ): Promise<{ client: ClientPublic; etag: string }> {
    const where = opts.where ?? '';
    const patch = parseInput(PatchClientInput, input, where);
    await this.directory.requireTenant(tenantId);
    return this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const current = await this.load(tx, tenantId, ref);
      const before = toClientView(current);
      if (opts.ifMatch !== undefined && !ifMatchSatisfied(opts.ifMatch, clientEtag(before)))
        throw new ApiError(
          412,
          'precondition_failed',
          "If-Match does not match the client's current ETag; read the client again (RFC 9110 §13.1.1).",
        );
      const merged = asRegistration(current);
      for (const [k, v] of Object.entries(patch)) if (v !== undefined) merged[k] = v === null ? undefined : v;
      // One source of keys: naming one drops the other; leaving private_key_jwt drops both.
      if (patch.jwks) merged.jwks_uri = undefined;
      if (patch.jwks_uri) merged.jwks = undefined;
      if (
        patch.token_endpoint_auth_method &&
        patch.token_endpoint_auth_method !== 'private_key_jwt' &&
        patch.jwks === undefined &&
        patch.jwks_uri === undefined
      ) {
        merged.jwks = undefined;
        merged.jwks_uri = undefined;
      }
      const c = parseInput(CreateClientInput, merged, where);
      const fields: Partial<Client> = {
        name: c.name,
        redirect_uris: [...new Set(c.redirect_uris)],
        allowed_origins: [...new Set(c.allowed_origins)],
        scopes: [...new Set(c.scopes)],
        grant_types: [...new Set(c.grant_types)],
        first_party: c.first_party,
        token_endpoint_auth_method: c.token_endpoint_auth_method ?? current.token_endpoint_auth_method,
        jwks: c.jwks ? { keys: c.jwks.keys } : null,
        jwks_uri: c.jwks_uri ?? null,
        logo_uri: c.logo_uri ?? null,
        authorization_signed_response_alg: c.authorization_signed_response_alg ?? null,
        introspection_signed_response_alg: c.introspection_signed_response_alg ?? null,
        require_pushed_authorization_requests: c.require_pushed_authorization_requests,
        require_signed_request_object: c.require_signed_request_object,
        fapi_profile: c.fapi_profile ?? null,
      };
      // A caller's own work in this transaction (RFC 7592's token rotation), changed or not.
      await opts.within?.(tx, current);
      const changed = EDITABLE.filter((k) => canonicalize(fields[k] ?? null) !== canonicalize(current[k] ?? null));
      if (!changed.length) return { client: before, etag: clientEtag(before) };
      const now = Date.now();
      fields.updated_at = Math.max(now, current.updated_at + 1);
      await scope.clients.update(current.id, current.client_id, fields);
      const after = toClientView((await scope.clients.get(current.id))!);
      const pick = (v: ClientPublic) => Object.fromEntries(changed.map((k) => [k, v[k]]));
      await audit(tx, actor, {
        tenantId,
        action: 'client.update',
        targetType: 'client',
        targetId: current.client_id,
        summary: { changed, before: pick(before), after: pick(after) },
      });
      return { client: after, etag: clientEtag(after) };
    });
  }

  /**
   * Adds a secret, returned here once; the client's live secrets keep working until
   * `old_secret_expires_in` seconds from now (0: they stop now). Only a client that
   * authenticates with a secret gets one (400 otherwise).
   */
  async addSecret(
    tenantId: string,
    ref: string,
    input: unknown,
    actor: Actor,
    where = '',
  ): Promise<ClientSecretInfo & { client_secret: string; old_secrets_expire_at: number | null }> {
    const { old_secret_expires_in } = parseInput(AddClientSecretInput, input ?? {}, where);
    await this.directory.requireTenant(tenantId);
    return this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const c = await this.load(tx, tenantId, ref);
      if (c.client_type !== 'confidential' || !SECRET_METHODS.has(c.token_endpoint_auth_method))
        throw badRequest(
          `Client ${c.client_id} authenticates with ${c.token_endpoint_auth_method}, not a secret: ` +
            'it has none to rotate.',
        );
      const now = Date.now();
      const oldUntil = now + old_secret_expires_in * 1000;
      const old = await scope.clients.expireLiveSecrets(c.client_id, oldUntil, now);
      const secret = randomToken(32);
      const id = newId('csec');
      await scope.clients.insertSecret({ id, clientId: c.client_id, hash: this.hasher.hash(secret), createdAt: now });
      await scope.clients.touch(c.client_id, now);
      await audit(tx, actor, {
        tenantId,
        action: 'client.secret.add',
        targetType: 'client',
        targetId: c.client_id,
        // The secret's id, never its value or hash.
        summary: { secret_id: id, old_secrets: old, old_secrets_expire_at: old ? oldUntil : null },
      });
      return {
        id,
        created_at: now,
        expires_at: null,
        client_secret: secret,
        old_secrets_expire_at: old ? oldUntil : null,
      };
    });
  }

  /** The secrets that authenticate now: ids and times, never a value or a hash. */
  async listSecrets(tenantId: string, ref: string): Promise<ClientSecretInfo[]> {
    await this.directory.requireTenant(tenantId);
    const c = await this.load(this.ds, tenantId, ref);
    const live = await new TenantScope(this.ds, tenantId).clients.liveSecrets(c.client_id, Date.now());
    return live.map(({ id, created_at, expires_at }) => ({ id, created_at, expires_at }));
  }

  /** Revokes one live secret at once; 404 when the client has no such live secret. */
  async revokeSecret(tenantId: string, ref: string, secretId: string, actor: Actor): Promise<void> {
    await this.directory.requireTenant(tenantId);
    await this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const c = await this.load(tx, tenantId, ref);
      const now = Date.now();
      if (!(await scope.clients.revokeSecret(c.client_id, secretId, now)))
        throw notFound(`Live secret ${secretId} of client ${c.client_id}`);
      await scope.clients.touch(c.client_id, now);
      await audit(tx, actor, {
        tenantId,
        action: 'client.secret.revoke',
        targetType: 'client',
        targetId: c.client_id,
        summary: { secret_id: secretId },
      });
    });
  }

  /**
   * Disables the client: invalid_client everywhere from the commit on, and in the same
   * transaction its refresh token families revoked, its codes deleted and its access-token
   * watermark set (tokens issued until this second stay inactive after an enable). Idempotent.
   */
  async disable(tenantId: string, ref: string, actor: Actor): Promise<ClientPublic> {
    return this.setState(tenantId, ref, actor, 'disabled');
  }

  /** Enables a disabled client: its credentials work again; its revoked tokens stay revoked. */
  async enable(tenantId: string, ref: string, actor: Actor): Promise<ClientPublic> {
    return this.setState(tenantId, ref, actor, 'active');
  }

  private async setState(tenantId: string, ref: string, actor: Actor, status: Client['status']): Promise<ClientPublic> {
    await this.directory.requireTenant(tenantId);
    return this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const c = await this.load(tx, tenantId, ref);
      if (c.status === status) return toClientView(c);
      const now = Date.now();
      let families = 0;
      if (status === 'disabled') {
        // iat is whole seconds: every token issued so far has iat <= this second.
        await scope.clients.setStatus(c.client_id, status, Math.floor(now / 1000));
        families = await scope.clients.revokeGrants(c.client_id, now);
      } else {
        await scope.clients.setStatus(c.client_id, status, null);
      }
      await scope.clients.touch(c.client_id, now);
      await audit(tx, actor, {
        tenantId,
        action: status === 'disabled' ? 'client.disable' : 'client.enable',
        targetType: 'client',
        targetId: c.client_id,
        summary: status === 'disabled' ? { families_revoked: families } : {},
      });
      return toClientView((await scope.clients.get(c.id))!);
    });
  }

  /**
   * Deletes the client with its secrets, codes, refresh token families and consents; its access
   * tokens go inactive with it (their client is gone). A client_id is 144 random bits, never
   * issued twice.
   */
  async delete(tenantId: string, ref: string, actor: Actor): Promise<void> {
    await this.directory.requireTenant(tenantId);
    await this.ds.transaction(async (tx) => {
      const c = await this.load(tx, tenantId, ref);
      const scope = new TenantScope(tx, tenantId);
      // Its roles (machine-to-machine RBAC, docs/rbac.md) go with it.
      const roles = await scope.roleAssignments.removePrincipal('client', c.client_id);
      await scope.clients.remove(c.id, c.client_id);
      await audit(tx, actor, {
        tenantId,
        action: 'client.delete',
        targetType: 'client',
        targetId: c.client_id,
        summary: { name: c.name, ...(roles ? { role_assignments_removed: roles } : {}) },
      });
    });
  }
}
