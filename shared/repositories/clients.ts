/**
 * A tenant's OAuth clients. The cross-tenant lookups by client_id and by CORS origin are in
 * lookups.ts.
 */
import { ClientEntity, type Client } from '../db/entities.js';
import { exec } from '../db/sql.js';
import { clampLimit, manager, type Page, type ScopeRef } from './common.js';

export class ScopedClients {
  constructor(private readonly s: ScopeRef) {}
  private get repo() {
    return manager(this.s.db).getRepository(ClientEntity);
  }
  get(id: string): Promise<Client | null> {
    return this.repo.findOneBy({ tenant_id: this.s.tenantId, id });
  }
  getByClientId(clientId: string): Promise<Client | null> {
    return this.repo.findOneBy({ tenant_id: this.s.tenantId, client_id: clientId });
  }
  list(page: Page = {}): Promise<Client[]> {
    return this.repo.find({
      where: { tenant_id: this.s.tenantId },
      order: { created_at: 'ASC', id: 'ASC' },
      take: clampLimit(page.limit),
      skip: page.offset ?? 0,
    });
  }
  /** Writes the agent-writable metadata (docs/agents.md); 1 when the row was this tenant's. */
  updateMetadata(
    id: string,
    m: { name: string; description: string | null; logo_uri: string | null; client_uri: string | null },
    now: number,
  ): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE clients SET name = ?, description = ?, logo_uri = ?, client_uri = ?, updated_at = ?
        WHERE tenant_id = ? AND id = ?`,
      [m.name, m.description, m.logo_uri, m.client_uri, now, this.s.tenantId, id],
    );
  }
  async insert(c: Omit<Client, 'tenant_id'>): Promise<Client> {
    const { id, ...rest } = c;
    const row = { id, tenant_id: this.s.tenantId, ...rest };
    await this.repo.insert(row);
    // One row per allowed origin, beside the JSON list, so a CORS preflight can find an origin by
    // index (Lookups.originRegistered). Both are written here, in the caller's transaction.
    for (const origin of row.allowed_origins)
      await exec(this.s.db, 'INSERT INTO client_origins (tenant_id, client_id, origin) VALUES (?, ?, ?)', [
        this.s.tenantId,
        row.client_id,
        origin,
      ]);
    return row;
  }
}
