/**
 * A tenant's users. Emails are unique per tenant, stored trimmed and lower-cased.
 *
 * Two kinds of reads: the directory's whole rows through the entity mapping (get, list,
 * insert), and the point reads of the sign-in and token paths (find…, status, the sign-up's
 * insert), which run through shared/db/sql.ts as cached prepared statements because they are on
 * every login.
 */
import { UserEntity, type User } from '../db/entities.js';
import { exec, one } from '../db/sql.js';
import { clampLimit, manager, type Page, type ScopeRef } from './common.js';

/** A user as the sign-in and token endpoints need one. */
export interface LoginUser {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  status: string;
  /** The standard claims' JSON (users.standard_claims), on the reads that issue claims (find, withTenantState). */
  standard_claims?: string | null;
  /**
   * Whether the address is verified (users.email_verified, 1 or 0; migration 0032), on the
   * sign-in and claims reads (find, findByEmail, withTenantState). Read it with `emailVerified()`
   * (shared/services/standard-claims.ts).
   */
  email_verified?: number | boolean;
  updated_at?: number;
}

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

  // ---- the sign-in and token paths ----

  /** The user with this id, or undefined. */
  find(id: string): Promise<LoginUser | undefined> {
    return one<LoginUser>(
      this.s.db,
      `SELECT id, tenant_id, email, name, status, standard_claims, email_verified, updated_at
         FROM users WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
  }

  /** The user with this address, compared as given (callers pass it normalised). */
  findByEmail(email: string): Promise<LoginUser | undefined> {
    return one<LoginUser>(
      this.s.db,
      'SELECT id, tenant_id, email, name, status, email_verified FROM users WHERE tenant_id = ? AND email = ?',
      [this.s.tenantId, email],
    );
  }

  /** The user's status, or undefined when there is no such user. */
  async status(id: string): Promise<string | undefined> {
    const r = await one<{ status: string }>(this.s.db, 'SELECT status FROM users WHERE tenant_id = ? AND id = ?', [
      this.s.tenantId,
      id,
    ]);
    return r?.status;
  }

  /** The user with the state of its tenant, in one statement (OIDC UserInfo). */
  async withTenantState(id: string): Promise<(LoginUser & { lifecycle_state: string }) | undefined> {
    return one<LoginUser & { lifecycle_state: string }>(
      this.s.db,
      `SELECT u.id, u.tenant_id, u.email, u.name, u.status, u.standard_claims, u.email_verified, u.updated_at,
              t.lifecycle_state
         FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE u.tenant_id = ? AND u.id = ?`,
      [this.s.tenantId, id],
    );
  }

  /** The account a sign-up creates: active, named after the address. */
  async insertSignup(u: { id: string; email: string; name: string; now: number }): Promise<LoginUser> {
    await exec(
      this.s.db,
      'INSERT INTO users (id, tenant_id, email, name, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [u.id, this.s.tenantId, u.email, u.name, 'active', u.now, u.now],
    );
    // Both sign-ups prove the address (an email code, or an upstream that verified it): the
    // column's default, 1.
    return { id: u.id, tenant_id: this.s.tenantId, email: u.email, name: u.name, status: 'active', email_verified: 1 };
  }

  /**
   * Records whether the user's address is verified (OIDC Core §5.1 `email_verified`), as the
   * last proof said: an email code (true), an upstream provider's claim. Writes only on a change.
   */
  async setEmailVerified(id: string, verified: boolean, now: number): Promise<void> {
    await exec(
      this.s.db,
      'UPDATE users SET email_verified = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND email_verified <> ?',
      [verified ? 1 : 0, now, this.s.tenantId, id, verified ? 1 : 0],
    );
  }

  // ---- the account page (daemon/routes/account/profile.ts) ----

  /** Renames the user; false when there is no such user. */
  async setName(id: string, name: string, now: number): Promise<boolean> {
    return (
      (await exec(this.s.db, 'UPDATE users SET name = ?, updated_at = ? WHERE tenant_id = ? AND id = ?', [
        name,
        now,
        this.s.tenantId,
        id,
      ])) === 1
    );
  }

  /**
   * Moves the user to a new, just proven address (verified, OIDC Core §5.1), only while the
   * address is still `from`: false when it changed meanwhile (or there is no such user). The
   * unique index (tenant, email) refuses an address another user took meanwhile.
   */
  async changeEmail(id: string, from: string, to: string, now: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        'UPDATE users SET email = ?, email_verified = 1, updated_at = ? WHERE tenant_id = ? AND id = ? AND email = ?',
        [to, now, this.s.tenantId, id, from],
      )) === 1
    );
  }
}
