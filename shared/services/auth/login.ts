/**
 * Email-code login, browser sessions and direct-auth artifacts.
 *
 * - A code is six digits, stored as an HMAC, valid ten minutes, with five attempts counted by a
 *   conditional UPDATE so concurrent guesses cannot exceed the limit. A new code supersedes
 *   the old one. Resends within 30 s are refused (429), for every address alike.
 * - Send answers the same whether or not the address has an account (no enumeration): a code
 *   row is written either way, but mail goes only to accounts (or to anyone when the tenant
 *   allows sign-up).
 * - The session cookie value is random; the database holds only its SHA-256.
 */
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { deriveKey, newId, randomToken } from '../../crypto.js';
import { exec, json, num, one, type Db } from '../../db/sql.js';
import { ApiError, InvalidGrant } from '../../errors.js';
import { recordAuthEvent, type RequestMeta } from './history.js';
import { tokenHash } from './pkce.js';
import {
  ARTIFACT_TTL_MS,
  EMAIL_CODE_MAX_ATTEMPTS,
  EMAIL_CODE_RESEND_INTERVAL_MS,
  EMAIL_CODE_TTL_MS,
  SESSION_TOUCH_INTERVAL_MS,
  SESSION_TTL_MS,
} from './policy.js';

/** Where login mail goes: the outbox, written in the caller's transaction. */
export interface MailQueue {
  enqueueEmail(
    em: EntityManager,
    msg: { tenantId: string; to: string; subject: string; text: string; html?: string },
  ): Promise<string>;
  kick(): void;
}

export interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  status: string;
}

export interface SessionRow {
  id: string;
  tenant_id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  auth_time: number;
  acr: string;
  amr: string[];
  user_agent: string | null;
  last_seen_at: number;
}

export interface CreatedSession {
  cookie: string;
  session: SessionRow;
  user: UserRow;
}

export const ACR_EMAIL_CODE = 'urn:iam:acr:email-code';
export const AMR_EMAIL_CODE = ['otp', 'email'];

export class LoginService {
  private readonly codeKey: Buffer;

  private readonly resendIntervalMs: number;

  constructor(
    private readonly ds: DataSource,
    secretKey: string,
    private readonly mail: MailQueue,
    private readonly issuerHost: string,
    opts: { resendIntervalMs?: number } = {},
  ) {
    this.codeKey = deriveKey(secretKey, 'email-code');
    this.resendIntervalMs = opts.resendIntervalMs ?? EMAIL_CODE_RESEND_INTERVAL_MS;
  }

  private codeHash(id: string, code: string): string {
    return createHmac('sha256', this.codeKey).update(`${id}:${code}`).digest('base64url');
  }

  async findUserById(tenantId: string, id: string): Promise<UserRow | undefined> {
    return one<UserRow>(
      this.ds,
      'SELECT id, tenant_id, email, name, status FROM users WHERE tenant_id = ? AND id = ?',
      [tenantId, id],
    );
  }

  async findUserByEmail(db: Db, tenantId: string, email: string): Promise<UserRow | undefined> {
    return one<UserRow>(db, 'SELECT id, tenant_id, email, name, status FROM users WHERE tenant_id = ? AND email = ?', [
      tenantId,
      email,
    ]);
  }

  /** Issues a code for `email` in the client's tenant. Resolves the same way for unknown addresses. */
  async sendCode(p: {
    tenantId: string;
    clientId: string;
    email: string;
    allowSignup: boolean;
    meta: RequestMeta;
  }): Promise<{ expiresIn: number }> {
    const now = Date.now();
    const last = await one<{ created_at: unknown }>(
      this.ds,
      'SELECT created_at FROM email_codes WHERE tenant_id = ? AND email = ? ORDER BY created_at DESC LIMIT 1',
      [p.tenantId, p.email],
    );
    if (last && now - num(last.created_at) < this.resendIntervalMs) {
      const retry = Math.ceil((this.resendIntervalMs - (now - num(last.created_at))) / 1000);
      throw new ApiError(429, 'slow_down', `A code was sent moments ago; wait ${retry} s before asking for another.`, {
        retry_after: retry,
      });
    }
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const id = newId('ec');
    await this.ds.transaction(async (em) => {
      const user = await this.findUserByEmail(em, p.tenantId, p.email);
      await exec(
        em,
        'UPDATE email_codes SET consumed_at = ? WHERE tenant_id = ? AND email = ? AND consumed_at IS NULL',
        [now, p.tenantId, p.email],
      );
      await exec(
        em,
        'INSERT INTO email_codes (id, tenant_id, email, user_id, client_id, code_hash, attempts, created_at, expires_at, consumed_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, NULL)',
        [id, p.tenantId, p.email, user?.id ?? null, p.clientId, this.codeHash(id, code), now, now + EMAIL_CODE_TTL_MS],
      );
      const deliver = user ? user.status === 'active' : p.allowSignup;
      if (deliver) {
        await this.mail.enqueueEmail(em, {
          tenantId: p.tenantId,
          to: p.email,
          subject: `Your sign-in code: ${code}`,
          text: `Your sign-in code for ${this.issuerHost} is ${code}.\n\nIt expires in 10 minutes. If you did not ask for it, ignore this message.\n`,
          html: `<p>Your sign-in code for ${this.issuerHost} is</p><p style="font-size:24px;letter-spacing:4px"><strong>${code}</strong></p><p>It expires in 10 minutes. If you did not ask for it, ignore this message.</p>`,
        });
      }
      await recordAuthEvent(em, {
        tenantId: p.tenantId,
        userId: user?.id ?? null,
        event: 'email_code_sent',
        outcome: deliver ? 'success' : 'failure',
        reason: deliver ? undefined : 'no_account',
        clientId: p.clientId,
        meta: p.meta,
      });
    });
    this.mail.kick();
    return { expiresIn: EMAIL_CODE_TTL_MS / 1000 };
  }

  /**
   * Checks a code; on success consumes it and returns the user (created when sign-up is on).
   * `onSuccess` runs in the transaction that consumes the code and records the success (the
   * caller's session, say), so a login's writes commit once; if it throws, none of them do.
   */
  async verifyCode<T = undefined>(
    p: { tenantId: string; clientId: string; email: string; code: string; allowSignup: boolean; meta: RequestMeta },
    onSuccess?: (em: EntityManager, user: UserRow) => Promise<T>,
  ): Promise<{ user: UserRow; result: T | undefined }> {
    const now = Date.now();
    const fail = async (reason: string, message: string, userId: string | null = null): Promise<never> => {
      await recordAuthEvent(this.ds, {
        tenantId: p.tenantId,
        userId,
        event: 'email_code_verify',
        outcome: 'failure',
        reason,
        clientId: p.clientId,
        meta: p.meta,
      });
      throw new InvalidGrant(message);
    };
    const row = await one<{
      id: string;
      user_id: string | null;
      client_id: string;
      code_hash: string;
      attempts: unknown;
      expires_at: unknown;
    }>(
      this.ds,
      'SELECT id, user_id, client_id, code_hash, attempts, expires_at FROM email_codes WHERE tenant_id = ? AND email = ? AND consumed_at IS NULL ORDER BY created_at DESC LIMIT 1',
      [p.tenantId, p.email],
    );
    if (!row || num(row.expires_at) <= now) {
      // Still attributed to the account, when there is one: the user's history shows every attempt.
      const owner = row?.user_id ?? (await this.findUserByEmail(this.ds, p.tenantId, p.email))?.id ?? null;
      return fail('no_code', 'The code is expired or was never requested; request a new one.', owner);
    }
    if (row.client_id !== p.clientId)
      return fail('client_mismatch', 'The code was requested by another client.', row.user_id);
    const expected = Buffer.from(row.code_hash);
    const given = Buffer.from(this.codeHash(row.id, /^\d{6}$/.test(p.code) ? p.code : 'x'));
    const matches = expected.length === given.length && timingSafeEqual(expected, given);
    // Every attempt is counted by a conditional UPDATE (attempts < max), so parallel guesses
    // share one budget and a right code after the budget is spent is refused like a wrong one.
    const exhausted = () => fail('attempts_exhausted', 'Too many attempts; request a new code.', row.user_id);
    if (!matches) {
      const counted = await exec(
        this.ds,
        'UPDATE email_codes SET attempts = attempts + 1 WHERE id = ? AND consumed_at IS NULL AND attempts < ?',
        [row.id, EMAIL_CODE_MAX_ATTEMPTS],
      );
      if (!counted) return exhausted();
      const left = EMAIL_CODE_MAX_ATTEMPTS - num(row.attempts) - 1;
      return fail(
        'wrong_code',
        left > 0
          ? `The code is incorrect; ${left} attempt${left === 1 ? '' : 's'} left.`
          : 'The code is incorrect; request a new code.',
        row.user_id,
      );
    }
    type Outcome =
      { user: UserRow; result: T | undefined } | { refused: 'spent' | 'no_account' } | { disabled: UserRow };
    const outcome = await this.ds.transaction(async (em): Promise<Outcome> => {
      // The right code: count the attempt and consume the code in one write.
      const won = await exec(
        em,
        'UPDATE email_codes SET attempts = attempts + 1, consumed_at = ? WHERE id = ? AND consumed_at IS NULL AND attempts < ?',
        [now, row.id, EMAIL_CODE_MAX_ATTEMPTS],
      );
      if (!won) return { refused: 'spent' };
      let user = await this.findUserByEmail(em, p.tenantId, p.email);
      if (!user) {
        if (!p.allowSignup) return { refused: 'no_account' };
        const id = newId('usr');
        const name = p.email.split('@')[0].slice(0, 200);
        await exec(
          em,
          'INSERT INTO users (id, tenant_id, email, name, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
          [id, p.tenantId, p.email, name, 'active', now, now],
        );
        user = { id, tenant_id: p.tenantId, email: p.email, name, status: 'active' };
      }
      if (user.status !== 'active') return { disabled: user };
      await recordAuthEvent(em, {
        tenantId: p.tenantId,
        userId: user.id,
        event: 'email_code_verify',
        outcome: 'success',
        clientId: p.clientId,
        meta: p.meta,
      });
      return { user, result: onSuccess ? await onSuccess(em, user) : undefined };
    });
    if ('refused' in outcome) {
      if (outcome.refused === 'no_account')
        return fail('no_account', 'The code is expired or was never requested; request a new one.');
      // Spent since it was read: used by a parallel request, or its budget used up by parallel guesses.
      const current = await one<{ consumed_at: unknown }>(this.ds, 'SELECT consumed_at FROM email_codes WHERE id = ?', [
        row.id,
      ]);
      return current?.consumed_at == null
        ? exhausted()
        : fail('already_used', 'The code was already used.', row.user_id);
    }
    if ('disabled' in outcome) {
      await recordAuthEvent(this.ds, {
        tenantId: p.tenantId,
        userId: outcome.disabled.id,
        event: 'email_code_verify',
        outcome: 'failure',
        reason: 'user_disabled',
        clientId: p.clientId,
        meta: p.meta,
      });
      throw new ApiError(403, 'access_denied', 'This account is disabled.');
    }
    return outcome;
  }

  async createSession(
    db: Db,
    p: { user: UserRow; authTime: number; acr: string; amr: string[]; clientId: string; meta: RequestMeta },
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
    await exec(
      db,
      'INSERT INTO sessions (id, tenant_id, user_id, created_at, expires_at, auth_time, acr, amr, user_agent, ip, last_seen_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)',
      [
        session.id,
        session.tenant_id,
        session.user_id,
        now,
        session.expires_at,
        session.auth_time,
        session.acr,
        JSON.stringify(session.amr),
        session.user_agent,
        p.meta.ip?.slice(0, 64) ?? null,
        now,
      ],
    );
    await recordAuthEvent(db, {
      tenantId: p.user.tenant_id,
      userId: p.user.id,
      event: 'session_created',
      outcome: 'success',
      clientId: p.clientId,
      meta: p.meta,
    });
    return { cookie, session, user: p.user };
  }

  /** The live session behind a cookie value, with its user, or undefined. */
  async findSession(cookie: string | undefined): Promise<{ session: SessionRow; user: UserRow } | undefined> {
    if (!cookie || cookie.length > 100) return undefined;
    const r = await one<Record<string, unknown>>(
      this.ds,
      `SELECT s.id, s.tenant_id, s.user_id, s.created_at, s.expires_at, s.auth_time, s.acr, s.amr, s.user_agent, s.last_seen_at,
              u.email, u.name, u.status, t.lifecycle_state
         FROM sessions s JOIN users u ON u.id = s.user_id AND u.tenant_id = s.tenant_id JOIN tenants t ON t.id = s.tenant_id
        WHERE s.id = ? AND s.revoked_at IS NULL`,
      [tokenHash(cookie)],
    );
    const now = Date.now();
    if (!r || num(r.expires_at) <= now || r.status !== 'active' || r.lifecycle_state !== 'active') return undefined;
    const session: SessionRow = {
      id: String(r.id),
      tenant_id: String(r.tenant_id),
      user_id: String(r.user_id),
      created_at: num(r.created_at),
      expires_at: num(r.expires_at),
      auth_time: num(r.auth_time),
      acr: String(r.acr),
      amr: json<string[]>(r.amr),
      user_agent: (r.user_agent as string) ?? null,
      last_seen_at: num(r.last_seen_at),
    };
    if (now - session.last_seen_at > SESSION_TOUCH_INTERVAL_MS) {
      await exec(this.ds, 'UPDATE sessions SET last_seen_at = ? WHERE id = ?', [now, session.id]);
    }
    return {
      session,
      user: {
        id: session.user_id,
        tenant_id: session.tenant_id,
        email: String(r.email),
        name: String(r.name),
        status: 'active',
      },
    };
  }

  /** Ends a session and revokes every token family granted through it. */
  async revokeSession(db: Db, sessionId: string, reason: string): Promise<void> {
    const now = Date.now();
    await exec(db, 'UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, sessionId]);
    await exec(
      db,
      'UPDATE token_families SET revoked_at = ?, revoked_reason = ? WHERE session_id = ? AND revoked_at IS NULL',
      [now, reason, sessionId],
    );
  }

  async createArtifact(p: {
    user: UserRow;
    clientId: string;
    channel: string;
    providerId: string;
    codeChallenge: string;
    authRequestId: string | null;
    authTime: number;
    amr: string[];
  }): Promise<{ artifact: string; expiresIn: number }> {
    const artifact = randomToken(32);
    const now = Date.now();
    await exec(
      this.ds,
      'INSERT INTO direct_auth_artifacts (id, tenant_id, client_id, user_id, channel, provider_id, code_challenge, auth_request_id, auth_time, amr, created_at, expires_at, consumed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)',
      [
        tokenHash(artifact),
        p.user.tenant_id,
        p.clientId,
        p.user.id,
        p.channel,
        p.providerId,
        p.codeChallenge,
        p.authRequestId,
        p.authTime,
        JSON.stringify(p.amr),
        now,
        now + ARTIFACT_TTL_MS,
      ],
    );
    return { artifact, expiresIn: ARTIFACT_TTL_MS / 1000 };
  }

  /** Looks up an unconsumed, unexpired artifact (the caller checks the bindings, then consumes). */
  async findArtifact(artifact: string) {
    const r = await one<Record<string, unknown>>(
      this.ds,
      'SELECT id, tenant_id, client_id, user_id, channel, provider_id, code_challenge, auth_request_id, auth_time, amr, expires_at, consumed_at FROM direct_auth_artifacts WHERE id = ?',
      [tokenHash(artifact)],
    );
    if (!r || r.consumed_at !== null || num(r.expires_at) <= Date.now()) return undefined;
    return {
      id: String(r.id),
      tenantId: String(r.tenant_id),
      clientId: String(r.client_id),
      userId: String(r.user_id),
      channel: String(r.channel),
      providerId: String(r.provider_id),
      codeChallenge: String(r.code_challenge),
      authRequestId: (r.auth_request_id as string) ?? null,
      authTime: num(r.auth_time),
      amr: json<string[]>(r.amr),
    };
  }

  /** One winner: the artifact is single-use even under concurrent redemption. */
  async consumeArtifact(db: Db, id: string): Promise<boolean> {
    return (
      (await exec(db, 'UPDATE direct_auth_artifacts SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL', [
        Date.now(),
        id,
      ])) === 1
    );
  }
}
