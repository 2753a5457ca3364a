/**
 * Email-code sign-in: sending a code and checking it.
 *
 * - A code is six digits, stored as an HMAC, valid ten minutes, with five attempts counted by a
 *   conditional UPDATE so concurrent guesses cannot exceed the limit. A new code supersedes
 *   the old one. Resends within the resend interval (30 s by default) are refused (429), for
 *   every address alike.
 * - Send answers the same whether or not the address has an account (no enumeration): a code
 *   row is written either way, but mail goes only to accounts (or to anyone when the tenant
 *   allows sign-up).
 * - A right code is consumed in the transaction that also records the success and runs the
 *   caller's next step (creating the session, say), so a login's writes commit once.
 */
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { deriveKey, newId } from '../../crypto.js';
import type { Database, Tx } from '../../db/index.js';
import { ApiError, InvalidGrant } from '../../errors.js';
import { TenantScope, type LoginUser } from '../../repositories/index.js';
import { recordAuthEvent, type RequestMeta } from './history.js';
import { EMAIL_CODE_MAX_ATTEMPTS, EMAIL_CODE_RESEND_INTERVAL_MS, EMAIL_CODE_TTL_MS } from './policy.js';

export type { LoginUser };

/** The authentication context class and methods of an email-code sign-in (OIDC Core §2). */
export const ACR_EMAIL_CODE = 'urn:iam:acr:email-code';
export const AMR_EMAIL_CODE = ['otp', 'email'];

/** Where login mail goes: the outbox, written in the caller's transaction, then kicked. */
export interface MailQueue {
  enqueueEmail(
    tx: Tx,
    msg: { tenantId: string; to: string; subject: string; text: string; html?: string },
  ): Promise<string>;
  kick(): void;
}

/** The parameters of a code check. */
export interface VerifyCodeInput {
  tenantId: string;
  clientId: string;
  email: string;
  code: string;
  allowSignup: boolean;
  meta: RequestMeta;
}

/** Sends and checks email codes (see the file header for the rules). */
export class EmailCodeService {
  private readonly codeKey: Buffer;
  private readonly resendIntervalMs: number;

  constructor(
    private readonly db: Database,
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

  /** Issues a code for `email` in the client's tenant. Resolves the same way for unknown addresses. */
  async sendCode(p: {
    tenantId: string;
    clientId: string;
    email: string;
    allowSignup: boolean;
    meta: RequestMeta;
  }): Promise<{ expiresIn: number }> {
    const now = Date.now();
    const scope = new TenantScope(this.db, p.tenantId);
    const last = await scope.emailCodes.lastSentAt(p.email);
    if (last !== undefined && now - last < this.resendIntervalMs) {
      const retry = Math.ceil((this.resendIntervalMs - (now - last)) / 1000);
      throw new ApiError(429, 'slow_down', `A code was sent moments ago; wait ${retry} s before asking for another.`, {
        retry_after: retry,
      });
    }
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const id = newId('ec');
    await this.db.transaction(async (tx) => {
      const s = scope.in(tx);
      const user = await s.users.findByEmail(p.email);
      await s.emailCodes.supersede(p.email, now);
      await s.emailCodes.insert({
        id,
        email: p.email,
        userId: user?.id ?? null,
        clientId: p.clientId,
        codeHash: this.codeHash(id, code),
        createdAt: now,
        expiresAt: now + EMAIL_CODE_TTL_MS,
      });
      const deliver = user ? user.status === 'active' : p.allowSignup;
      if (deliver) {
        await this.mail.enqueueEmail(tx, {
          tenantId: p.tenantId,
          to: p.email,
          subject: `Your sign-in code: ${code}`,
          text:
            `Your sign-in code for ${this.issuerHost} is ${code}.\n\n` +
            'It expires in 10 minutes. If you did not ask for it, ignore this message.\n',
          html:
            `<p>Your sign-in code for ${this.issuerHost} is</p>` +
            `<p style="font-size:24px;letter-spacing:4px"><strong>${code}</strong></p>` +
            '<p>It expires in 10 minutes. If you did not ask for it, ignore this message.</p>',
        });
      }
      await recordAuthEvent(s, {
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
    p: VerifyCodeInput,
    onSuccess?: (tx: Tx, user: LoginUser) => Promise<T>,
  ): Promise<{ user: LoginUser; result: T | undefined }> {
    const now = Date.now();
    const scope = new TenantScope(this.db, p.tenantId);
    const fail = async (reason: string, message: string, userId: string | null = null): Promise<never> => {
      await recordAuthEvent(scope, {
        userId,
        event: 'email_code_verify',
        outcome: 'failure',
        reason,
        clientId: p.clientId,
        meta: p.meta,
      });
      throw new InvalidGrant(message);
    };
    const row = await scope.emailCodes.latestLive(p.email);
    if (!row || row.expires_at <= now) {
      // Still attributed to the account, when there is one: the user's history shows every attempt.
      const owner = row?.user_id ?? (await scope.users.findByEmail(p.email))?.id ?? null;
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
      if (!(await scope.emailCodes.countAttempt(row.id, EMAIL_CODE_MAX_ATTEMPTS))) return exhausted();
      const left = EMAIL_CODE_MAX_ATTEMPTS - row.attempts - 1;
      return fail(
        'wrong_code',
        left > 0
          ? `The code is incorrect; ${left} attempt${left === 1 ? '' : 's'} left.`
          : 'The code is incorrect; request a new code.',
        row.user_id,
      );
    }
    type Outcome =
      { user: LoginUser; result: T | undefined } | { refused: 'spent' | 'no_account' } | { disabled: LoginUser };
    const outcome = await this.db.transaction(async (tx): Promise<Outcome> => {
      const s = scope.in(tx);
      // The right code: count the attempt and consume the code in one write.
      if (!(await s.emailCodes.consume(row.id, EMAIL_CODE_MAX_ATTEMPTS, now))) return { refused: 'spent' };
      let user = await s.users.findByEmail(p.email);
      if (!user) {
        if (!p.allowSignup) return { refused: 'no_account' };
        user = await s.users.insertSignup({
          id: newId('usr'),
          email: p.email,
          name: p.email.split('@')[0].slice(0, 200),
          now,
        });
      }
      if (user.status !== 'active') return { disabled: user };
      await recordAuthEvent(s, {
        userId: user.id,
        event: 'email_code_verify',
        outcome: 'success',
        clientId: p.clientId,
        meta: p.meta,
      });
      return { user, result: onSuccess ? await onSuccess(tx, user) : undefined };
    });
    if ('refused' in outcome) {
      if (outcome.refused === 'no_account')
        return fail('no_account', 'The code is expired or was never requested; request a new one.');
      // Spent since it was read: used by a parallel request, or its budget used up by parallel guesses.
      return (await scope.emailCodes.consumedAt(row.id)) === null
        ? exhausted()
        : fail('already_used', 'The code was already used.', row.user_id);
    }
    if ('disabled' in outcome) {
      await recordAuthEvent(scope, {
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
}
