/** A tenant's users. Emails are unique per tenant, stored trimmed and lower-cased. */
import { UserEntity, type User } from '../db/entities.js';
import { clampLimit, manager, type Page, type ScopeRef } from './common.js';

export class ScopedUsers {
  constructor(private readonly s: ScopeRef) {}
  private get repo() {
    return manager(this.s.db).getRepository(UserEntity);
  }
  get(id: string): Promise<User | null> {
    return this.repo.findOneBy({ tenant_id: this.s.tenantId, id });
  }
  getByEmail(email: string): Promise<User | null> {
    return this.repo.findOneBy({ tenant_id: this.s.tenantId, email: email.trim().toLowerCase() });
  }
  list(page: Page = {}): Promise<User[]> {
    return this.repo.find({
      where: { tenant_id: this.s.tenantId },
      order: { created_at: 'ASC', id: 'ASC' },
      take: clampLimit(page.limit),
      skip: page.offset ?? 0,
    });
  }
  async insert(u: Omit<User, 'tenant_id'>): Promise<User> {
    const { id, ...rest } = u;
    const row = { id, tenant_id: this.s.tenantId, ...rest };
    await this.repo.insert(row);
    return row;
  }
}
