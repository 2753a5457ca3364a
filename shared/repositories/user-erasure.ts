/**
 * The statements of a user's lifecycle moves (docs/directory.md, "Users: disable, sign out
 * everywhere, delete (erasure)"): the status flip, ending every session and token family of
 * the user, and the erasure's deletes across every tenant-owned table that names the user.
 *
 * An exception to "every query of a table in one file" (docs/architecture.md), like a claim
 * rename's bulk statements: an erasure touches some twenty tables in one transaction, and the
 * list of them is the thing to review as a whole, so it is kept here, in one place, rather
 * than as one method in each table's file. Every statement is bound to the scope's tenant.
 */
import type { DataSource } from 'typeorm';
import type { Db } from '../db/index.js';
import { exec, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

const dataSourceOf = (db: Db): DataSource => ('manager' in db ? db : db.connection);

/** A user as the lifecycle moves read it (under a row lock on MySQL). */
export interface LifecycleUser {
  id: string;
  email: string;
  status: string;
}

export class ScopedUserErasure {
  constructor(private readonly s: ScopeRef) {}

  /**
   * The user, locked for the rest of the transaction on MySQL (SQLite transactions are
   * serialised by the gate): two concurrent moves on one user queue here, and the second sees
   * the first's outcome.
   */
  async lock(userId: string): Promise<LifecycleUser | undefined> {
    const lock = dataSourceOf(this.s.db).options.type === 'mysql' ? ' FOR UPDATE' : '';
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT id, email, status FROM users WHERE tenant_id = ? AND id = ?${lock}`,
      [this.s.tenantId, userId],
    );
    return r ? { id: String(r.id), email: String(r.email), status: String(r.status) } : undefined;
  }

  /** Moves the user from `from` to `to`; 0 when it was not in `from` (the race's loser). */
  setStatus(userId: string, from: string, to: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      'UPDATE users SET status = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND status = ?',
      [to, now, this.s.tenantId, userId, from],
    );
  }

  /**
   * Ends every live session of the user and revokes every token family (so every refresh token
   * and every access token, which names its family in `fid`: introspection checks the family on
   * each request, cache hits included), and spends the authorization codes and direct-auth
   * artifacts not yet redeemed, which would otherwise mint new tokens. Returns the sessions
   * and families ended.
   */
  async endEverything(userId: string, reason: string, now: number): Promise<{ sessions: number; families: number }> {
    const t = this.s.tenantId;
    const sessions = await exec(
      this.s.db,
      'UPDATE sessions SET revoked_at = ? WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL',
      [now, t, userId],
    );
    const families = await exec(
      this.s.db,
      `UPDATE token_families SET revoked_at = ?, revoked_reason = ?
        WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL`,
      [now, reason, t, userId],
    );
    await exec(
      this.s.db,
      'UPDATE auth_codes SET consumed_at = ? WHERE tenant_id = ? AND user_id = ? AND consumed_at IS NULL',
      [now, t, userId],
    );
    await exec(
      this.s.db,
      'UPDATE direct_auth_artifacts SET consumed_at = ? WHERE tenant_id = ? AND user_id = ? AND consumed_at IS NULL',
      [now, t, userId],
    );
    return { sessions, families };
  }

  /**
   * Deletes every row of the tenant that names the user (by id, or by address for the email
   * codes), the user's row last. `pseudonym` replaces the user's id where a row belongs to
   * someone else as well (an approval step the user decided, a grant the user acted on), so
   * the other party's record stays whole. Returns the rows deleted per table.
   */
  async erase(user: LifecycleUser, pseudonym: string): Promise<Record<string, number>> {
    const t = this.s.tenantId;
    const u = user.id;
    const n: Record<string, number> = {};
    const run = async (table: string, sql: string, params: unknown[]) => {
      const c = await exec(this.s.db, sql, params);
      if (c) n[table] = (n[table] ?? 0) + c;
    };
    const families = 'SELECT id FROM token_families WHERE tenant_id = ? AND user_id = ?';
    await run('refresh_tokens', `DELETE FROM refresh_tokens WHERE tenant_id = ? AND family_id IN (${families})`, [
      t,
      t,
      u,
    ]);
    await run('auth_codes', 'DELETE FROM auth_codes WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('token_families', 'DELETE FROM token_families WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('sessions', 'DELETE FROM sessions WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('direct_auth_artifacts', 'DELETE FROM direct_auth_artifacts WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('email_codes', 'DELETE FROM email_codes WHERE tenant_id = ? AND (user_id = ? OR email = ?)', [
      t,
      u,
      user.email,
    ]);
    await run('auth_history', 'DELETE FROM auth_history WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('consents', 'DELETE FROM consents WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('custom_claim_values', 'DELETE FROM custom_claim_values WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('data_exports', 'DELETE FROM data_exports WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('passkeys', 'DELETE FROM passkeys WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('webauthn_challenges', 'DELETE FROM webauthn_challenges WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('upstream_login_states', 'DELETE FROM upstream_login_states WHERE tenant_id = ? AND user_hint = ?', [
      t,
      u,
    ]);
    await run('upstream_identity_links', 'DELETE FROM upstream_identity_links WHERE tenant_id = ? AND user_id = ?', [
      t,
      u,
    ]);
    await run(
      'external_token_refresh_runs',
      'DELETE FROM external_token_refresh_runs WHERE tenant_id = ? AND user_id = ?',
      [t, u],
    );
    await run(
      'user_relationships',
      'DELETE FROM user_relationships WHERE tenant_id = ? AND (subject_id = ? OR related_subject_id = ?)',
      [t, u, u],
    );
    // Agent grants the user gave or delegated, with their consents and token records: gone, the
    // grant's tokens answer agent_grant_revoked at introspection (docs/agents.md).
    const grants = 'SELECT id FROM agent_grants WHERE tenant_id = ? AND (grantor_user_id = ? OR delegator_user_id = ?)';
    for (const table of ['agent_grant_consents', 'agent_grant_tokens'])
      await run(table, `DELETE FROM ${table} WHERE tenant_id = ? AND grant_id IN (${grants})`, [t, t, u, u]);
    await run(
      'agent_grants',
      'DELETE FROM agent_grants WHERE tenant_id = ? AND (grantor_user_id = ? OR delegator_user_id = ?)',
      [t, u, u],
    );
    // Approval requests the user made or that are about the user, whole; the user's part in
    // other people's requests (a step decided, a grant acted on) keeps its row under the pseudonym.
    const mine = `((requester_subject_type = 'user' AND requester_subject_id = ?)
      OR (target_subject_type = 'user' AND target_subject_id = ?))`;
    const requests = `SELECT id FROM approval_requests WHERE tenant_id = ? AND ${mine}`;
    for (const table of ['approval_notifications', 'approval_grants', 'approval_steps'])
      await run(table, `DELETE FROM ${table} WHERE tenant_id = ? AND approval_request_id IN (${requests})`, [
        t,
        t,
        u,
        u,
      ]);
    await run('approval_requests', `DELETE FROM approval_requests WHERE tenant_id = ? AND ${mine}`, [t, u, u]);
    await run(
      'approval_steps (pseudonymised)',
      "UPDATE approval_steps SET subject_id = ? WHERE tenant_id = ? AND subject_type = 'user' AND subject_id = ?",
      [pseudonym, t, u],
    );
    for (const side of ['requester', 'actor'])
      await run(
        'approval_grants (pseudonymised)',
        `UPDATE approval_grants SET ${side}_subject_id = ?
          WHERE tenant_id = ? AND ${side}_subject_type = 'user' AND ${side}_subject_id = ?`,
        [pseudonym, t, u],
      );
    // The roles held directly (docs/rbac.md); a group's roles stay with the group.
    await run(
      'role_assignments',
      "DELETE FROM role_assignments WHERE tenant_id = ? AND principal_type = 'user' AND principal_id = ?",
      [t, u],
    );
    await run(
      'operational_notification_states',
      "DELETE FROM operational_notification_states WHERE tenant_id = ? AND subject_type = 'user' AND subject_id = ?",
      [t, u],
    );
    // A stored idempotent response that carried the user (the creating call's 201, say): the
    // ids are random, so the id in the body names this user and no other.
    await run('idempotency_keys', 'DELETE FROM idempotency_keys WHERE tenant_id = ? AND response_body LIKE ?', [
      t,
      `%${u}%`,
    ]);
    await run('group_members', 'DELETE FROM group_members WHERE tenant_id = ? AND user_id = ?', [t, u]);
    await run('users', 'DELETE FROM users WHERE tenant_id = ? AND id = ?', [t, u]);
    return n;
  }
}
