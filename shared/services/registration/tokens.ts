/**
 * Initial access tokens (RFC 7591 §3, docs/registration.md "Initial access tokens"): the
 * operator issues one for a tenant, shown once and stored as its SHA-256; a registration
 * presents it as a Bearer token and spends one of its uses. And the platform's default
 * registration tenant (`service_meta`), where a registration that names none lands.
 */
import { newId, randomToken } from '../../crypto.js';
import type { Database, Tx } from '../../db/index.js';
import { notFound } from '../../errors.js';
import {
  RegistrationLookups,
  ServiceMetaRepository,
  TenantRepository,
  TenantScope,
  type InitialAccessTokenRow,
} from '../../repositories/index.js';
import { InitialAccessTokenInput, PlatformRegistrationInput } from '../../schemas/registration.js';
import { parseInput } from '../../schemas/validate.js';
import { tokenHash } from '../auth/pkce.js';
import { audit, type Actor } from '../audit.js';

/** The service_meta name of the default registration tenant. */
export const DEFAULT_TENANT_META = 'registration.default_tenant';

export interface InitialAccessTokenView {
  id: string;
  tenantId: string;
  maxUses: number;
  uses: number;
  scopeCeiling: string[] | null;
  createdBy: string;
  createdAt: number;
  expiresAt: number;
}

const viewOf = (tenantId: string, r: InitialAccessTokenRow): InitialAccessTokenView => ({
  id: r.id,
  tenantId,
  maxUses: r.max_uses,
  uses: r.uses,
  scopeCeiling: r.scope_ceiling,
  createdBy: r.created_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** A token's value: a prefix that names what it is (so a scanner can find a leaked one), then 256 bits. */
const TOKEN_PREFIX = 'iat_';

export class InitialAccessTokenService {
  constructor(private readonly ds: Database) {}

  private async requireTenant(tenantId: string): Promise<void> {
    if (!(await new TenantRepository(this.ds).get(tenantId))) throw notFound(`Tenant ${tenantId}`);
  }

  /** Issues a token; its value is in this answer only. */
  async create(
    tenantId: string,
    input: unknown,
    actor: Actor,
    where = '',
  ): Promise<InitialAccessTokenView & { token: string }> {
    const p = parseInput(InitialAccessTokenInput, input ?? {}, where);
    await this.requireTenant(tenantId);
    const token = TOKEN_PREFIX + randomToken(32);
    const now = Date.now();
    const row: InitialAccessTokenRow = {
      id: newId('iat'),
      max_uses: p.maxUses,
      uses: 0,
      scope_ceiling: p.scopeCeiling ? [...new Set(p.scopeCeiling)] : null,
      created_by: `${actor.type}:${actor.id}`.slice(0, 128),
      created_at: now,
      expires_at: now + p.expiresInSeconds * 1000,
    };
    await this.ds.transaction(async (tx) => {
      await new TenantScope(tx, tenantId).registrations.insertInitialToken({ ...row, token_hash: tokenHash(token) });
      await audit(tx, actor, {
        tenantId,
        action: 'registration.initial_access_token.create',
        targetType: 'initial_access_token',
        targetId: row.id,
        summary: { max_uses: row.max_uses, expires_at: row.expires_at, scope_ceiling: row.scope_ceiling },
      });
    });
    return { ...viewOf(tenantId, row), token };
  }

  async list(tenantId: string): Promise<InitialAccessTokenView[]> {
    await this.requireTenant(tenantId);
    const rows = await new TenantScope(this.ds, tenantId).registrations.initialTokens();
    return rows.map((r) => viewOf(tenantId, r));
  }

  /** Deletes the token (registrations it admitted stay); 404 when the tenant has no such token. */
  async revoke(tenantId: string, id: string, actor: Actor): Promise<void> {
    await this.requireTenant(tenantId);
    await this.ds.transaction(async (tx) => {
      if (!(await new TenantScope(tx, tenantId).registrations.removeInitialToken(id)))
        throw notFound(`Initial access token ${id}`);
      await audit(tx, actor, {
        tenantId,
        action: 'registration.initial_access_token.revoke',
        targetType: 'initial_access_token',
        targetId: id,
        summary: {},
      });
    });
  }

  /** The tenant and id of a presented token, or undefined (unknown value). */
  find(token: string): Promise<{ tenantId: string; id: string } | undefined> {
    return new RegistrationLookups(this.ds).initialTokenTenant(tokenHash(token));
  }

  /** Spends one use in the caller's transaction: the token row when a use was taken, else undefined. */
  async spend(tx: Tx, tenantId: string, id: string, now: number): Promise<InitialAccessTokenRow | undefined> {
    const regs = new TenantScope(tx, tenantId).registrations;
    if (!(await regs.spendInitialToken(id, now))) return undefined;
    return regs.initialToken(id);
  }

  /** The token row as stored (uses, expiry), for the refusal's message. */
  peek(tenantId: string, id: string): Promise<InitialAccessTokenRow | undefined> {
    return new TenantScope(this.ds, tenantId).registrations.initialToken(id);
  }

  // ---- the platform's default registration tenant ----

  async defaultTenant(): Promise<{ defaultTenantId: string | null }> {
    const v = await new ServiceMetaRepository(this.ds).get(DEFAULT_TENANT_META);
    return { defaultTenantId: v ? v : null };
  }

  /** Sets (or clears, with null) the default tenant; the tenant must exist. Audited on the platform. */
  async setDefaultTenant(input: unknown, actor: Actor, where = ''): Promise<{ defaultTenantId: string | null }> {
    const { defaultTenantId } = parseInput(PlatformRegistrationInput, input, where);
    if (defaultTenantId !== null) await this.requireTenant(defaultTenantId);
    const before = await this.defaultTenant();
    await this.ds.transaction(async (tx) => {
      await new ServiceMetaRepository(tx).set(DEFAULT_TENANT_META, defaultTenantId ?? '', Date.now());
      await audit(tx, actor, {
        tenantId: defaultTenantId ?? before.defaultTenantId ?? null,
        action: 'platform.registration.default_tenant',
        targetType: 'platform',
        targetId: 'registration',
        summary: { before: before.defaultTenantId, after: defaultTenantId },
      });
    });
    return { defaultTenantId };
  }
}
