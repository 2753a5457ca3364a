/**
 * Repositories. SQLite and MySQL have no row-level security, so this layer is the tenant
 * isolation boundary: a TenantScope is bound to one tenant id at construction and adds it to
 * every query it makes. Platform-level data (tenants, signing keys) has its own repositories.
 */
import type { DataSource, EntityManager } from 'typeorm';
import {
  AuditEventEntity, boolInt, ClientEntity, jsonText, SigningKeyEntity, TenantEntity, UserEntity,
  type AuditEvent, type Client, type SigningKey, type Tenant, type User,
} from '../db/entities.js';
import { one } from '../db/sql.js';

type Db = DataSource | EntityManager;
const mgr = (db: Db): EntityManager => ('manager' in db ? db.manager : db);

export interface Page { limit?: number; offset?: number }
const clampLimit = (n: number | undefined) => Math.min(Math.max(n ?? 100, 1), 1000);

export class TenantRepository {
  constructor(private readonly db: Db) {}
  private get repo() { return mgr(this.db).getRepository(TenantEntity); }
  get(id: string): Promise<Tenant | null> { return this.repo.findOneBy({ id }); }
  list(page: Page = {}): Promise<Tenant[]> {
    return this.repo.find({ order: { created_at: 'ASC', id: 'ASC' }, take: clampLimit(page.limit), skip: page.offset ?? 0 });
  }
  async insert(t: Tenant): Promise<Tenant> { await this.repo.insert(t); return t; }
}

export class SigningKeyRepository {
  constructor(private readonly db: Db) {}
  private get repo() { return mgr(this.db).getRepository(SigningKeyEntity); }
  list(): Promise<SigningKey[]> { return this.repo.find({ order: { created_at: 'DESC', kid: 'ASC' } }); }
  get(kid: string): Promise<SigningKey | null> { return this.repo.findOneBy({ kid }); }
  async insert(k: SigningKey): Promise<void> { await this.repo.insert(k); }
  async update(kid: string, patch: Partial<SigningKey>): Promise<void> { await this.repo.update({ kid }, patch); }
}

class ScopedClients {
  constructor(private readonly db: Db, private readonly tenantId: string) {}
  private get repo() { return mgr(this.db).getRepository(ClientEntity); }
  get(id: string): Promise<Client | null> { return this.repo.findOneBy({ tenant_id: this.tenantId, id }); }
  getByClientId(clientId: string): Promise<Client | null> {
    return this.repo.findOneBy({ tenant_id: this.tenantId, client_id: clientId });
  }
  list(page: Page = {}): Promise<Client[]> {
    return this.repo.find({
      where: { tenant_id: this.tenantId },
      order: { created_at: 'ASC', id: 'ASC' }, take: clampLimit(page.limit), skip: page.offset ?? 0,
    });
  }
  async insert(c: Omit<Client, 'tenant_id'>): Promise<Client> {
    const { id, ...rest } = c;
    const row = { id, tenant_id: this.tenantId, ...rest };
    await this.repo.insert(row);
    return row;
  }
}

class ScopedUsers {
  constructor(private readonly db: Db, private readonly tenantId: string) {}
  private get repo() { return mgr(this.db).getRepository(UserEntity); }
  get(id: string): Promise<User | null> { return this.repo.findOneBy({ tenant_id: this.tenantId, id }); }
  getByEmail(email: string): Promise<User | null> {
    return this.repo.findOneBy({ tenant_id: this.tenantId, email: email.trim().toLowerCase() });
  }
  list(page: Page = {}): Promise<User[]> {
    return this.repo.find({
      where: { tenant_id: this.tenantId },
      order: { created_at: 'ASC', id: 'ASC' }, take: clampLimit(page.limit), skip: page.offset ?? 0,
    });
  }
  async insert(u: Omit<User, 'tenant_id'>): Promise<User> {
    const { id, ...rest } = u;
    const row = { id, tenant_id: this.tenantId, ...rest };
    await this.repo.insert(row);
    return row;
  }
}

class ScopedAudit {
  constructor(private readonly db: Db, private readonly tenantId: string) {}
  private get repo() { return mgr(this.db).getRepository(AuditEventEntity); }
  list(page: Page = {}): Promise<AuditEvent[]> {
    return this.repo.find({
      where: { tenant_id: this.tenantId },
      order: { created_at: 'DESC', id: 'DESC' }, take: clampLimit(page.limit), skip: page.offset ?? 0,
    });
  }
}

/** All tenant-owned data, reachable only through one tenant id. */
export class TenantScope {
  readonly clients: ScopedClients;
  readonly users: ScopedUsers;
  readonly audit: ScopedAudit;
  constructor(db: Db, readonly tenantId: string) {
    if (!tenantId) throw new Error('TenantScope needs a tenant id');
    this.clients = new ScopedClients(db, tenantId);
    this.users = new ScopedUsers(db, tenantId);
    this.audit = new ScopedAudit(db, tenantId);
  }
}

/** Append-only audit writer; there is deliberately no update or delete here (nor in the DB). */
export class AuditWriter {
  constructor(private readonly db: Db) {}
  async append(e: AuditEvent): Promise<void> {
    await mgr(this.db).getRepository(AuditEventEntity).insert(e);
  }
}

/**
 * The one lookup that crosses tenants: OAuth clients present a globally unique client_id
 * before anyone knows their tenant. It resolves the client together with its tenant's state,
 * and every later query is scoped by the tenant it returns.
 */
export class ClientRegistry {
  constructor(private readonly db: Db) {}
  /** One indexed join, no query builder: this runs on nearly every OAuth request. */
  async findByClientId(clientId: string): Promise<{ client: Client; tenantState: string; allowSignup: boolean } | null> {
    const r = await one<Record<string, unknown>>(this.db,
      `SELECT c.id, c.tenant_id, c.client_id, c.name, c.client_type, c.secret_hash, c.redirect_uris, c.grant_types, c.scopes, c.audiences,
              c.first_party, c.status, c.resource_identifiers, c.strict_introspection, c.created_at, c.updated_at, t.lifecycle_state, t.settings
         FROM clients c JOIN tenants t ON t.id = c.tenant_id WHERE c.client_id = ?`, [clientId]);
    if (!r) return null;
    const client: Client = {
      id: String(r.id), tenant_id: String(r.tenant_id), client_id: String(r.client_id), name: String(r.name),
      client_type: r.client_type as Client['client_type'], secret_hash: (r.secret_hash as string | null) ?? null,
      redirect_uris: jsonText.from(r.redirect_uris) as string[], grant_types: jsonText.from(r.grant_types) as string[],
      scopes: jsonText.from(r.scopes) as string[], audiences: jsonText.from(r.audiences) as string[],
      first_party: boolInt.from(r.first_party) as boolean, status: r.status as Client['status'],
      resource_identifiers: typeof r.resource_identifiers === 'string' ? (JSON.parse(r.resource_identifiers) as string[]) : [],
      strict_introspection: boolInt.from(r.strict_introspection) as boolean,
      created_at: Number(r.created_at), updated_at: Number(r.updated_at),
    };
    const settings = (jsonText.from(r.settings) ?? {}) as { allowSignup?: unknown };
    return { client, tenantState: String(r.lifecycle_state), allowSignup: settings.allowSignup === true };
  }
}
