/**
 * Browser sessions: created at sign-in, found by their cookie, touched as they are used,
 * revoked at logout or when the user signs a device out.
 *
 * The cookie value is random; the database holds only its SHA-256, which is also the
 * session's id. A session is found by that hash before its tenant is known (lookups.ts); its
 * touch and its revocation then go through that tenant's scope. Revoking a session revokes
 * every token family granted through it.
 */
import { randomToken } from '../../crypto.js';
import type { Database, Db } from '../../db/index.js';
import { Lookups, TenantScope, type LoginUser, type SessionRow } from '../../repositories/index.js';
import { recordAuthEvent, type RequestMeta } from './history.js';
import { sessionOver, sessionPolicyOf } from '../session-policy.js';
import { tokenHash } from './pkce.js';
import { SESSION_TOUCH_INTERVAL_MS, SESSION_TTL_MS } from './policy.js';

export type { SessionRow };

/** A session just created, with the cookie value to hand to the browser (never stored). */
export interface CreatedSession {
  cookie: string;
  session: SessionRow;
  user: LoginUser;
}

/** A live session and its (active) user. */
export interface FoundSession {
  session: SessionRow;
  user: LoginUser;
}

/** Creates, finds, touches and revokes browser sessions. */
export class SessionService {
  private readonly lookups: Lookups;

  constructor(private readonly db: Database) {
    this.lookups = new Lookups(db);
  }

  /**
   * Creates a session for `p.user` and records it in the history. `db`: the caller's
   * transaction, so the session commits with the sign-in that created it.
   */
  async createSession(
    db: Db,
    p: { user: LoginUser; authTime: number; acr: string; amr: string[]; clientId: string; meta: RequestMeta },
  ): Promise<CreatedSession> {
    const cookie = randomToken(32);
    const now = Date.now();
    const session: SessionRow = {
      id: tokenHash(cookie),
      tenant_id: p.user.tenant_id,
      user_id: p.user.id,
      created_at: now,
      expires_at: now + SESSION_TTL_MS,
      auth_time: p.authTime,
      acr: p.acr,
      amr: p.amr,
      user_agent: p.meta.userAgent?.slice(0, 512) ?? null,
      last_seen_at: now,
    };
    const scope = new TenantScope(db, p.user.tenant_id);
    await scope.sessions.insert({ ...session, ip: p.meta.ip?.slice(0, 64) ?? null });
    await recordAuthEvent(scope, {
      userId: p.user.id,
      event: 'session_created',
      outcome: 'success',
      clientId: p.clientId,
      meta: p.meta,
    });
    return { cookie, session, user: p.user };
  }

  /**
   * The live session behind a cookie value, with its user, or undefined: expired, over its
   * tenant's idle or absolute timeout (`settings.sessions`, read by the same lookup: no extra
   * read; docs/security.md, "Session timeouts"), revoked, its user disabled or its tenant not
   * active all read as no session. Records the use at most once a minute, so reading a session
   * is not a write each time (and the idle timeout is precise to that minute).
   */
  async findSession(cookie: string | undefined): Promise<FoundSession | undefined> {
    if (!cookie || cookie.length > 100) return undefined;
    const found = await this.lookups.sessionByCookieHash(tokenHash(cookie));
    const now = Date.now();
    if (!found || found.session.expires_at <= now || found.user.status !== 'active' || found.tenantState !== 'active')
      return undefined;
    if (sessionOver(found.session, sessionPolicyOf(found.sessionsSection), now)) return undefined;
    const { session } = found;
    if (now - session.last_seen_at > SESSION_TOUCH_INTERVAL_MS) {
      await new TenantScope(this.db, session.tenant_id).sessions.touch(session.id, now);
    }
    return {
      session,
      user: {
        id: session.user_id,
        tenant_id: session.tenant_id,
        email: found.user.email,
        name: found.user.name,
        status: 'active',
      },
    };
  }

  /**
   * Step-up re-authentication (docs/passkeys.md, "Pages"): the session's user has just signed
   * in again, so the session's auth_time becomes `p.authTime` and its acr and amr those of that
   * sign-in (OIDC Core §2: auth_time is the time of the last active authentication). `db`: the
   * caller's transaction, the one that consumed the proof. False when the session has ended.
   */
  async reauthenticate(
    db: Db,
    tenantId: string,
    sessionId: string,
    p: { authTime: number; acr: string; amr: string[] },
  ): Promise<boolean> {
    return (await new TenantScope(db, tenantId).sessions.reauthenticate(sessionId, p.authTime, p.acr, p.amr)) === 1;
  }

  /** Ends a session and revokes every token family granted through it. */
  async revokeSession(tenantId: string, sessionId: string, reason: string): Promise<void> {
    const now = Date.now();
    const scope = new TenantScope(this.db, tenantId);
    await scope.sessions.revoke(sessionId, now);
    await scope.tokens.revokeFamiliesOfSession(sessionId, reason, now);
  }

  /** RP-initiated logout: ends the session (and its tokens) and records the logout. */
  async logout(current: FoundSession, p: { clientId?: string; meta: RequestMeta }): Promise<void> {
    await this.revokeSession(current.session.tenant_id, current.session.id, 'logout');
    await recordAuthEvent(new TenantScope(this.db, current.session.tenant_id), {
      userId: current.user.id,
      event: 'logout',
      outcome: 'success',
      clientId: p.clientId,
      meta: p.meta,
    });
  }

  /** A user of the tenant (any status), or undefined: who a session or a token is for. */
  findUser(tenantId: string, id: string): Promise<LoginUser | undefined> {
    return new TenantScope(this.db, tenantId).users.find(id);
  }
}
