/**
 * A tenant's users. Emails are unique per tenant, stored trimmed and lower-cased.
 *
 * Two kinds of reads: the directory's whole rows through the entity mapping (get, list,
 * insert), and the point reads of the sign-in and token paths (find…, status, the sign-up's
 * insert), which run through shared/db/sql.ts as cached prepared statements because they are on
 * every login.
 */
import { UserEntity, type JsonObject, type User } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { all, exec, json, num, one } from '../db/sql.js';
import { clampLimit, manager, type Page, type ScopeRef } from './common.js';

/**
 * A user's whole row as the admin read, search and edit see it (docs/directory.md, "Users:
 * read, search, edit"): read by SQL, since the entity mapping has no email_verified.
 */
export interface UserRecord extends User {
  standard_claims: JsonObject | null;
  email_verified: boolean;
}

/** The filters of the admin user list; each one given narrows the page. */
export interface UserSearch {
  /** The address, exactly (callers pass it normalised: trimmed, lower case). */
  email?: string;
  /** Addresses starting with this (lower case). */
  emailPrefix?: string;
  /** Names starting with this (ASCII letters compared without case, on both dialects). */
  namePrefix?: string;
  status?: string;
  /** created_at at or after (epoch ms). */
  createdFrom?: number;
  /** created_at before (epoch ms). */
  createdTo?: number;
  /** The last successful sign-in at or after (epoch ms); a user who never signed in is left out. */
  signedInFrom?: number;
  /** The last successful sign-in before (epoch ms); a user who never signed in is left out. */
  signedInTo?: number;
  /** Keyset: only users that sort after this one in (created_at, id) order. */
  after?: { createdAt: number; id: string };
  /** Rows to skip (the list's older offset paging; callers never combine it with `after`). */
  offset?: number;
  limit: number;
}

/** The history's event that a successful sign-in writes (a new session: shared/services/auth/sessions.ts). */
export const SIGN_IN_EVENT = 'session_created';

const RECORD_COLUMNS =
  'u.id, u.tenant_id, u.email, u.name, u.status, u.standard_claims, u.email_verified, u.created_at, u.updated_at';
const isMysql = (db: Db): boolean => ('manager' in db ? db : db.connection).options.type === 'mysql';
/** A LIKE pattern matching values that start with `prefix`, with `!` escaping LIKE's wildcards (both dialects). */
const startsWith = (prefix: string) => `${prefix.replace(/[!%_]/g, (c) => `!${c}`)}%`;

function toRecord(r: Record<string, unknown>): UserRecord {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    email: String(r.email),
    name: String(r.name),
    status: String(r.status) as User['status'],
    standard_claims: json<JsonObject | null>(r.standard_claims ?? null) ?? null,
    email_verified: Number(r.email_verified) === 1,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

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

  // ---- the admin read, search and edit ----

  /**
   * The user's whole row, or undefined. `forUpdate` locks it on MySQL until the caller's
   * transaction ends (an If-Match compare and the write it guards); SQLite serialises writers.
   */
  async record(id: string, opts: { forUpdate?: boolean } = {}): Promise<UserRecord | undefined> {
    const lock = opts.forUpdate && isMysql(this.s.db) ? ' FOR UPDATE' : '';
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${RECORD_COLUMNS} FROM users u WHERE u.tenant_id = ? AND u.id = ?${lock}`,
      [this.s.tenantId, id],
    );
    return r ? toRecord(r) : undefined;
  }

  /** One page of the tenant's users, in (created_at, id) order, filtered. */
  async search(f: UserSearch): Promise<UserRecord[]> {
    const where = ['u.tenant_id = ?'];
    const params: unknown[] = [this.s.tenantId];
    const add = (cond: string, ...values: unknown[]) => {
      where.push(cond);
      params.push(...values);
    };
    if (f.email !== undefined) add('u.email = ?', f.email);
    if (f.emailPrefix !== undefined) add("u.email LIKE ? ESCAPE '!'", startsWith(f.emailPrefix));
    // Lower case on both sides: MariaDB's binary collation makes LIKE case-sensitive, SQLite's
    // LIKE is not; LOWER() of both dialects agrees on ASCII letters.
    if (f.namePrefix !== undefined) {
      add("LOWER(u.name) LIKE ? ESCAPE '!'", startsWith(f.namePrefix.replace(/[A-Z]+/g, (c) => c.toLowerCase())));
    }
    if (f.status !== undefined) add('u.status = ?', f.status);
    if (f.createdFrom !== undefined) add('u.created_at >= ?', f.createdFrom);
    if (f.createdTo !== undefined) add('u.created_at < ?', f.createdTo);
    const lastSignIn =
      '(SELECT MAX(h.created_at) FROM auth_history h WHERE h.tenant_id = u.tenant_id AND h.user_id = u.id ' +
      "AND h.event = ? AND h.outcome = 'success')";
    if (f.signedInFrom !== undefined) add(`${lastSignIn} >= ?`, SIGN_IN_EVENT, f.signedInFrom);
    if (f.signedInTo !== undefined) add(`${lastSignIn} < ?`, SIGN_IN_EVENT, f.signedInTo);
    if (f.after !== undefined) {
      // Pages neither skip nor repeat rows: a user created meanwhile sorts after the cursor or before it, once.
      add('(u.created_at > ? OR (u.created_at = ? AND u.id > ?))', f.after.createdAt, f.after.createdAt, f.after.id);
    }
    const offset = f.offset ? ' OFFSET ?' : '';
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${RECORD_COLUMNS} FROM users u WHERE ${where.join(' AND ')}
        ORDER BY u.created_at, u.id LIMIT ?${offset}`,
      [...params, f.limit, ...(f.offset ? [f.offset] : [])],
    );
    return rows.map(toRecord);
  }

  /** Writes the operator-editable columns of a user's row; returns the rows changed (0: no such user). */
  updateProfile(id: string, p: { email: string; name: string; emailVerified: boolean; now: number }): Promise<number> {
    return exec(
      this.s.db,
      'UPDATE users SET email = ?, name = ?, email_verified = ?, updated_at = ? WHERE tenant_id = ? AND id = ?',
      [p.email, p.name, p.emailVerified ? 1 : 0, p.now, this.s.tenantId, id],
    );
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
