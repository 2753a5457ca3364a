/**
 * A user's lifecycle moves (docs/directory.md, "Users: disable, sign out everywhere, delete
 * (erasure)"): disable and enable, sign out everywhere, and erasure, by an operator (admin API,
 * `iam users …`) or, for erasure, by the user on the account page.
 *
 * Each move is ONE transaction: the user's row is locked (MySQL; SQLite's gate serialises),
 * the status moves by a conditional update, sessions and token families end, the audit event
 * is written. Introspection reads the family's revocation, the user's status and the user's
 * row on every request, cache hits included (introspection.ts), and so do the bearer check of
 * the user endpoints and /userinfo: once the transaction commits, every daemon on the database
 * answers `active: false` for the user's access tokens, with no cache to wait for.
 */
import { createHmac } from 'node:crypto';
import { deriveKey } from '../crypto.js';
import type { Database, Tx } from '../db/index.js';
import { ApiError } from '../errors.js';
import { TenantScope, type LifecycleUser } from '../repositories/index.js';
import { audit, type Actor } from './audit.js';

/** What a disable, enable or sign-out answers. */
export interface UserLifecycleResult {
  id: string;
  tenant_id: string;
  status: string;
  /** False when the move found the user already there (a repeated or concurrent call). */
  changed: boolean;
  sessions_ended: number;
  families_revoked: number;
}

/** What an erasure answers: the pseudonym the audit log keeps and the rows deleted per table. */
export interface UserErasureResult {
  id: string;
  tenant_id: string;
  deleted: true;
  pseudonym: string;
  erased: Record<string, number>;
}

const notFound = (tenantId: string, userId: string) =>
  new ApiError(404, 'not_found', `User ${userId} not found in tenant ${tenantId}.`);

export class UserLifecycleService {
  private readonly pseudonymKey: Buffer;

  constructor(
    private readonly db: Database,
    secretKey: string,
  ) {
    this.pseudonymKey = deriveKey(secretKey, 'user-pseudonym');
  }

  /**
   * The keyed pseudonym of an erased user: `psn_` and 22 characters of
   * HMAC-SHA256(HKDF(IAM_SECRET_KEY, "iam:user-pseudonym"), "<tenantId>:<userId>"), base64url.
   * Whoever holds the secret key and a user id can recompute it; nobody else can invert it.
   */
  pseudonym(tenantId: string, userId: string): string {
    const mac = createHmac('sha256', this.pseudonymKey).update(`${tenantId}:${userId}`).digest();
    return 'psn_' + mac.toString('base64url', 0, 16);
  }

  /** Disables the user and ends every session and token family; repeated, it changes nothing. */
  disable(tenantId: string, userId: string, actor: Actor): Promise<UserLifecycleResult> {
    return this.move(tenantId, userId, actor, 'disable');
  }

  /** Re-activates the user (status only: the sessions ended stay ended). */
  enable(tenantId: string, userId: string, actor: Actor): Promise<UserLifecycleResult> {
    return this.move(tenantId, userId, actor, 'enable');
  }

  /** Ends every session and token family of the user, who stays active and may sign in again. */
  signOut(tenantId: string, userId: string, actor: Actor): Promise<UserLifecycleResult> {
    return this.move(tenantId, userId, actor, 'sign_out');
  }

  private async move(
    tenantId: string,
    userId: string,
    actor: Actor,
    kind: 'disable' | 'enable' | 'sign_out',
  ): Promise<UserLifecycleResult> {
    return this.db.transaction(async (tx) => {
      const s = new TenantScope(tx, tenantId).userErasure;
      const user = await s.lock(userId);
      if (!user) throw notFound(tenantId, userId);
      const now = Date.now();
      let changed = true;
      let status = user.status;
      if (kind === 'disable' || kind === 'enable') {
        const [from, to] = kind === 'disable' ? ['active', 'disabled'] : ['disabled', 'active'];
        // The conditional update decides a race: the loser changes nothing and writes no event.
        changed = (await s.setStatus(userId, from, to, now)) === 1;
        if (changed) status = to;
      }
      const ended =
        changed && kind !== 'enable'
          ? await s.endEverything(userId, kind === 'disable' ? 'user_disabled' : 'user_signed_out', now)
          : { sessions: 0, families: 0 };
      if (changed)
        await audit(tx, actor, {
          tenantId,
          action: `user.${kind}`,
          targetType: 'user',
          targetId: userId,
          summary: kind === 'enable' ? {} : { sessions_ended: ended.sessions, families_revoked: ended.families },
        });
      return {
        id: userId,
        tenant_id: tenantId,
        status,
        changed,
        sessions_ended: ended.sessions,
        families_revoked: ended.families,
      };
    });
  }

  /**
   * Erases the user (GDPR art. 17): every row of the tenant that names the user, in one
   * transaction with its audit event. The audit log keeps the user's id (the events never held
   * the address or the name: see docs/directory.md for exactly what stays). 404 when the user is
   * not there, including for the loser of two concurrent erasures.
   */
  erase(tenantId: string, userId: string, actor: Actor): Promise<UserErasureResult> {
    return this.db.transaction((tx) => this.eraseIn(tx, tenantId, userId, actor));
  }

  private async eraseIn(tx: Tx, tenantId: string, userId: string, actor: Actor): Promise<UserErasureResult> {
    const s = new TenantScope(tx, tenantId).userErasure;
    const user: LifecycleUser | undefined = await s.lock(userId);
    if (!user) throw notFound(tenantId, userId);
    const pseudonym = this.pseudonym(tenantId, userId);
    const erased = await s.erase(user, pseudonym);
    await audit(tx, actor, {
      tenantId,
      action: 'user.delete',
      targetType: 'user',
      targetId: userId,
      summary: { pseudonym, erased },
    });
    return { id: userId, tenant_id: tenantId, deleted: true, pseudonym, erased };
  }
}
