/**
 * The registration endpoint (RFC 7591 §3) and the client configuration endpoint (RFC 7592):
 * docs/registration.md. A registration goes through DirectoryService.createClient, so the admin
 * API's validation is the one validation; an update through ClientLifecycleService.update; a
 * delete through its delete, so the client's tokens stop working as an admin delete's do.
 */
import { timingSafeEqual } from 'node:crypto';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { randomToken } from '../../crypto.js';
import type { Client } from '../../db/entities.js';
import type { Database } from '../../db/index.js';
import { AccessDenied, OAuthError } from '../../errors.js';
import { DbRateLimiter, TenantRepository, TenantScope, type RegistrationRow } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import { tokenHash } from '../auth/pkce.js';
import { slowDown } from '../auth/throttle.js';
import type { ClientLifecycleService } from '../client-lifecycle.js';
import type { DirectoryService } from '../directory.js';
import {
  asRegistrationError,
  invalidMetadata,
  mapMetadata,
  metadataOf,
  parseMetadata,
  scopeCeiling,
  type Admission,
} from './metadata.js';
import { DEFAULT_OPEN_PER_IP_PER_HOUR, DEFAULT_OPEN_PER_TENANT_PER_DAY } from '../../schemas/registration.js';
import { registrationPolicyOf, type RegistrationPolicy } from './policy.js';
import { verifySoftwareStatement } from './software-statement.js';
import type { InitialAccessTokenService } from './tokens.js';

/** RFC 6750 §3.1: a missing or wrong Bearer token, with its WWW-Authenticate challenge. */
export class InvalidToken extends OAuthError {
  constructor(d: string, missing = false) {
    super('invalid_token', d);
    this.status = 401;
    this.headers['WWW-Authenticate'] = missing
      ? 'Bearer realm="iam"'
      : `Bearer realm="iam", error="invalid_token", error_description="${d.replace(/["\\]/g, '')}"`;
  }
}

/** The Bearer token of an Authorization header (RFC 6750 §2.1), or undefined when none. */
export function bearerOf(authorization: string | undefined): string | undefined {
  const m = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization ?? '');
  return m?.[1];
}

export interface RegistrationRequestContext {
  authorization?: string;
  ip: string;
  requestId?: string;
  /** The registration endpoint's URL: the client configuration URI is `${endpoint}/${client_id}`. */
  endpoint: string;
}

export type RegistrationResponse = Record<string, unknown>;

const DAY_S = 86_400;

export class RegistrationService {
  constructor(
    private readonly ds: Database,
    private readonly deps: {
      directory: DirectoryService;
      clientLifecycle: () => ClientLifecycleService;
      tokens: InitialAccessTokenService;
    },
  ) {}

  private async tenantPolicy(tenantId: string): Promise<RegistrationPolicy | undefined> {
    const t = await new TenantRepository(this.ds).get(tenantId);
    if (!t || t.lifecycle_state !== 'active') return undefined;
    return registrationPolicyOf(t.settings?.registration);
  }

  /** RFC 7591 §3: registers a client; 201's body. */
  async register(body: unknown, rc: RegistrationRequestContext): Promise<RegistrationResponse> {
    let m = parseMetadata(body);
    const presented = bearerOf(rc.authorization);
    if (rc.authorization && !presented) throw new InvalidToken('The Authorization header is not a Bearer token.');
    // The tenant: the initial access token's, else the request's tenant_id, else the platform default.
    const iat = presented ? await this.deps.tokens.find(presented) : undefined;
    if (presented && !iat) throw new InvalidToken('The initial access token is not valid.');
    if (iat && m.tenant_id !== undefined && m.tenant_id !== iat.tenantId)
      throw invalidMetadata("tenant_id: names another tenant than the initial access token's");
    const tenantId = iat?.tenantId ?? m.tenant_id ?? (await this.deps.tokens.defaultTenant()).defaultTenantId;
    if (!tenantId)
      throw invalidMetadata(
        'tenant_id: name the tenant to register in; this service has no default registration tenant',
      );
    const policy = await this.tenantPolicy(tenantId);
    if (!policy) throw invalidMetadata(`tenant_id: no active tenant ${tenantId}`);
    if (policy.mode === 'closed')
      throw new AccessDenied('Dynamic client registration is closed in this tenant; ask its operator.');
    if (!iat && policy.mode === 'initial_access_token')
      throw new InvalidToken('This tenant registers clients with an initial access token only (RFC 7591 §3).', true);

    const row = iat ? await this.deps.tokens.peek(iat.tenantId, iat.id) : undefined;
    const now = Date.now();
    if (iat && (!row || row.uses >= row.max_uses || row.expires_at <= now))
      throw new InvalidToken('The initial access token is used up or expired.');
    if (m.software_statement !== undefined) {
      const claims = await verifySoftwareStatement(m.software_statement, policy);
      m = parseMetadata({ ...m, ...claims }); // RFC 7591 §2.3: the statement's values win
    }
    const admission: Admission = { anonymous: !iat, ceiling: scopeCeiling(policy, row?.scope_ceiling) };
    const mapped = mapMetadata(m, admission);
    if (!iat) await this.spendOpenBudget(tenantId, rc.ip, policy);

    const accessToken = randomToken(32);
    const secretTtl = policy.clientSecretTtlSeconds ?? 0;
    const secretExpiresAt = secretTtl > 0 ? Math.floor(now / 1000) + secretTtl : 0;
    const actor: Actor = { type: 'client', id: iat ? iat.id : 'anonymous-registration', requestId: rc.requestId };
    let reg: RegistrationRow | undefined;
    const created = await asRegistrationError(() =>
      this.deps.directory.createClient(tenantId, mapped.input, actor, '', {
        fields: mapped.fields,
        ...(secretExpiresAt ? { secretExpiresAt: secretExpiresAt * 1000 } : {}),
        within: async (tx, client) => {
          // The use is spent in the client's own transaction: a refused spend creates nothing.
          if (iat && !(await this.deps.tokens.spend(tx, tenantId, iat.id, now)))
            throw new InvalidToken('The initial access token is used up or expired.');
          reg = {
            client_id: client.client_id,
            access_token_hash: tokenHash(accessToken),
            initial_access_token_id: iat?.id ?? null,
            application_type: mapped.applicationType,
            software_id: m.software_id ?? null,
            software_version: m.software_version ?? null,
            contacts: m.contacts ?? [],
            client_secret_expires_at: secretExpiresAt,
            used_at: null,
            created_at: now,
            updated_at: now,
          };
          await new TenantScope(tx, tenantId).registrations.insert(reg);
        },
      }),
    );
    const client = (await new TenantScope(this.ds, tenantId).clients.getByClientId(created.client.client_id))!;
    return {
      ...metadataOf(client, reg!),
      ...(created.client_secret ? { client_secret: created.client_secret } : {}),
      registration_access_token: accessToken,
      registration_client_uri: `${rc.endpoint}/${client.client_id}`,
    };
  }

  /**
   * The open policy's budgets, spent before anything is written (DbRateLimiter: one budget per
   * key across every daemon). A refusal is 429 with Retry-After; the window's count of rows is
   * therefore at most the budget.
   */
  private async spendOpenBudget(tenantId: string, ip: string, policy: RegistrationPolicy): Promise<void> {
    const perIp = policy.openLimits?.perIpPerHour ?? DEFAULT_OPEN_PER_IP_PER_HOUR;
    const perTenant = policy.openLimits?.perTenantPerDay ?? DEFAULT_OPEN_PER_TENANT_PER_DAY;
    const take = async (limiter: DbRateLimiter, key: string, what: string) => {
      try {
        await limiter.consume(key);
      } catch (e) {
        if (e instanceof RateLimiterRes)
          throw slowDown(
            Math.ceil(e.msBeforeNext / 1000),
            `Too many anonymous registrations ${what}; try again in {s} s.`,
          );
        throw e;
      }
    };
    // The keys carry the limit, so a tenant that changes it starts a fresh window.
    await take(
      new DbRateLimiter(this.ds, { keyPrefix: `dcr-ip-${perIp}`, points: perIp, duration: 3600 }),
      `${tenantId}\n${ip}`,
      'from your network',
    );
    await take(
      new DbRateLimiter(this.ds, { keyPrefix: `dcr-tenant-${perTenant}`, points: perTenant, duration: DAY_S }),
      tenantId,
      'in this tenant',
    );
  }

  /**
   * RFC 7592 §2: the client and its registration, when `authorization` carries its registration
   * access token; otherwise 401 invalid_token (an unknown client, one not registered
   * dynamically and a wrong token answer alike, so the answer tells nothing about the client).
   */
  private async authorize(
    clientId: string,
    authorization: string | undefined,
  ): Promise<{ tenantId: string; client: Client; reg: RegistrationRow }> {
    const presented = bearerOf(authorization);
    if (!presented) throw new InvalidToken('The registration access token is required (RFC 7592 §3).', !authorization);
    const resolved = await this.deps.directory.resolveClient(clientId);
    const tenantId = resolved?.client.tenant_id;
    const scope = tenantId ? new TenantScope(this.ds, tenantId) : undefined;
    const reg = scope ? await scope.registrations.get(clientId) : undefined;
    const a = Buffer.from(tokenHash(presented));
    const b = Buffer.from(reg?.access_token_hash ?? '');
    if (!reg || !scope || a.length !== b.length || !timingSafeEqual(a, b))
      throw new InvalidToken('The registration access token is not valid for this client.');
    const client = (await scope.clients.getByClientId(clientId))!;
    return { tenantId: tenantId!, client, reg };
  }

  async read(clientId: string, rc: RegistrationRequestContext): Promise<RegistrationResponse> {
    const { client, reg } = await this.authorize(clientId, rc.authorization);
    return { ...metadataOf(client, reg), registration_client_uri: `${rc.endpoint}/${client.client_id}` };
  }

  /**
   * RFC 7592 §2.2: replaces the metadata whole, validated as a registration is and applied by
   * the admin API's update (so what cannot change there, a public client becoming
   * confidential, cannot here); a new registration access token, returned once.
   */
  async update(clientId: string, body: unknown, rc: RegistrationRequestContext): Promise<RegistrationResponse> {
    const { tenantId, client, reg } = await this.authorize(clientId, rc.authorization);
    const m = parseMetadata(body);
    if (m.client_id !== undefined && m.client_id !== clientId)
      throw invalidMetadata('client_id: must be the client_id of the registration being updated (RFC 7592 §2.2)');
    const policy = (await this.tenantPolicy(tenantId)) ?? { mode: 'closed' as const };
    const iatRow = reg.initial_access_token_id
      ? await this.deps.tokens.peek(tenantId, reg.initial_access_token_id)
      : undefined;
    const anonymous = reg.initial_access_token_id === null;
    const mapped = mapMetadata(
      { ...m, tenant_id: undefined },
      { anonymous, ceiling: scopeCeiling(policy, iatRow?.scope_ceiling) },
    );
    const i = mapped.input;
    const patch = {
      name: i.name,
      redirect_uris: i.redirect_uris,
      grant_types: i.grant_types,
      scopes: i.scopes,
      token_endpoint_auth_method: i.token_endpoint_auth_method,
      jwks: i.jwks ?? null,
      jwks_uri: i.jwks_uri ?? null,
      logo_uri: i.logo_uri ?? null,
    };
    const accessToken = randomToken(32);
    const now = Date.now();
    const actor: Actor = { type: 'client', id: clientId, requestId: rc.requestId };
    await asRegistrationError(() =>
      this.deps.clientLifecycle().update(tenantId, client.client_id, patch, actor, {
        within: async (tx, current) => {
          const scope = new TenantScope(tx, tenantId);
          const { policy_uri, tos_uri, client_uri } = mapped.fields;
          await scope.clients.update(current.id, current.client_id, {
            policy_uri,
            tos_uri,
            client_uri,
            updated_at: Math.max(now, current.updated_at + 1),
          });
          await scope.registrations.update(
            clientId,
            {
              access_token_hash: tokenHash(accessToken),
              application_type: mapped.applicationType,
              software_id: m.software_id ?? null,
              software_version: m.software_version ?? null,
              contacts: m.contacts ?? [],
            },
            now,
          );
          // The registration's own change (the token's rotation, the fields the admin update has
          // not), beside the admin update's client.update event when the client changed.
          await audit(tx, actor, {
            tenantId,
            action: 'client.registration.update',
            targetType: 'client',
            targetId: clientId,
            summary: { registration_access_token: 'rotated', policy_uri, tos_uri, client_uri },
          });
        },
      }),
    );
    const scope = new TenantScope(this.ds, tenantId);
    const after = (await scope.clients.getByClientId(clientId))!;
    return {
      ...metadataOf(after, (await scope.registrations.get(clientId))!),
      registration_access_token: accessToken,
      registration_client_uri: `${rc.endpoint}/${clientId}`,
    };
  }

  /**
   * RFC 7592 §2.3: deletes the client (its secrets, codes, refresh tokens, consents; its access
   * tokens go inactive), as the admin API's delete does.
   */
  async delete(clientId: string, rc: RegistrationRequestContext): Promise<void> {
    const { tenantId } = await this.authorize(clientId, rc.authorization);
    await this.deps
      .clientLifecycle()
      .delete(tenantId, clientId, { type: 'client', id: clientId, requestId: rc.requestId });
  }
}
