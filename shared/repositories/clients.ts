/** A tenant's OAuth clients. The cross-tenant lookup by client_id is in lookups.ts. */
import { ClientEntity, type Client } from '../db/entities.js';
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
  async insert(c: Omit<Client, 'tenant_id'>): Promise<Client> {
    const { id, ...rest } = c;
    const row = { id, tenant_id: this.s.tenantId, ...rest };
    await this.repo.insert(row);
    return row;
  }
}
