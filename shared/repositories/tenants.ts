/** Tenants: platform-level rows (a tenant is not owned by a tenant). */
import { TenantEntity, type Tenant } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { clampLimit, manager, type Page } from './common.js';

export class TenantRepository {
  constructor(private readonly db: Db) {}
  private get repo() {
    return manager(this.db).getRepository(TenantEntity);
  }
  get(id: string): Promise<Tenant | null> {
    return this.repo.findOneBy({ id });
  }
  list(page: Page = {}): Promise<Tenant[]> {
    return this.repo.find({
      order: { created_at: 'ASC', id: 'ASC' },
      take: clampLimit(page.limit),
      skip: page.offset ?? 0,
    });
  }
  async insert(t: Tenant): Promise<Tenant> {
    await this.repo.insert(t);
    return t;
  }
}
