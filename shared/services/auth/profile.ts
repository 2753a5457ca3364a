/**
 * The account page's profile (docs/directory.md, "The account page"): the user renames
 * themselves, and moves their account to another address by proving it with an email code.
 *
 * The address change:
 * - The code goes TO THE NEW ADDRESS. It is an `email_codes` row (the sign-in codes' table and
 *   rules: six digits stored as an HMAC, ten minutes, five attempts counted by a conditional
 *   UPDATE) whose address is the new one, whose `user_id` is the requesting user and whose
 *   binding is `email-change:<user id>`: that row IS the pending change, in the database, so any
 *   daemon confirms it, and no sign-in (whose bindings are its own login transactions) can use it.
 * - The budgets are the sign-in codes' (throttle.ts): the resend interval, the address's hourly
 *   mail, the IP's and the tenant's sends and checks, the address's wrong-code lock.
 * - An address another user of the tenant has is not revealed at the request (no more than the
 *   sign-up flow reveals: the answer is "code sent" either way, with the same work). That
 *   address's owner is told instead, with no code, that their address was asked for. Only a
 *   right code (which proves the address) can meet "in use": when the address was taken between
 *   the code and its confirmation, 409 `email_in_use`.
 * - Confirming moves the user, marks the address verified, writes the notice to the OLD address
 *   and the audit event, in one transaction.
 */
import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { deriveKey, newId } from '../../crypto.js';
import { isUniqueViolation, type Database, type Tx } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import { TenantScope } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import type { MailQueue } from './codes.js';
import { STEP_UP_MAX_AGE_MS } from './passkey-contract.js';
import { EMAIL_CODE_MAX_ATTEMPTS, EMAIL_CODE_TTL_MS } from './policy.js';
import type { Throttle } from './throttle.js';
import { emailVerified } from '../standard-claims.js';
import { MailTemplateService, type MailComposer } from '../mail-templates.js';

/** The client an address change's code is recorded for: the account page, not a registered client. */
const PROFILE_CLIENT_ID = 'account';

/** The binding of a user's address change, stored hashed like a login transaction's. */
const bindingOf = (userId: string): string => createHash('sha256').update(`email-change:${userId}`).digest('base64url');

const wrongCode = (message: string) => new ApiError(400, 'invalid_grant', message);

export class AccountProfileService {
  private readonly codeKey: Buffer;
  private readonly templates: MailComposer;

  /** `templates` composes the mails (the container's; without one, unbranded). */
  constructor(
    private readonly db: Database,
    config: { secretKey: string; issuer: string },
    private readonly mail: MailQueue,
    private readonly throttle: Throttle,
    templates?: MailComposer,
  ) {
    // Its own key: a sign-in code's HMAC never verifies as an address change's.
    this.codeKey = deriveKey(config.secretKey, 'email-change-code');
    this.templates = templates ?? new MailTemplateService(db, { issuerHost: new URL(config.issuer).host });
  }

  private codeHash(id: string, code: string): string {
    return createHmac('sha256', this.codeKey).update(`${id}:${code}`).digest('base64url');
  }

  /** The user's name, address and whether it is verified, as the account page shows them. */
  async profile(tenantId: string, userId: string): Promise<{ name: string; email: string; verified: boolean }> {
    const u = await new TenantScope(this.db, tenantId).users.find(userId);
    if (!u) throw new ApiError(404, 'not_found', 'No such user.');
    return { name: u.name, email: u.email, verified: emailVerified(u) };
  }

  /** Renames the user (already validated: 1 to 200 characters, trimmed), audited with the user as actor. */
  async rename(tenantId: string, userId: string, name: string, actor: Actor): Promise<void> {
    await this.db.transaction(async (tx) => {
      const s = new TenantScope(tx, tenantId);
      if (!(await s.users.setName(userId, name, Date.now()))) throw new ApiError(404, 'not_found', 'No such user.');
      await audit(tx, actor, {
        tenantId,
        action: 'user.rename',
        targetType: 'user',
        targetId: userId,
        summary: { via: 'account_page' },
      });
    });
  }

  /**
   * Sends the code of an address change to `newEmail` (normalised by the caller). Resolves the
   * same whether the address is free or another user's (see the file header).
   */
  async requestEmailChange(p: {
    tenantId: string;
    userId: string;
    currentEmail: string;
    newEmail: string;
    ip: string;
    /** The session's sign-in time: the change needs one from the last five minutes. */
    authTime: number;
    /** The account page's locale, for the mails; default English. */
    locale?: string;
  }): Promise<{ expiresIn: number }> {
    // Whoever holds a session left open must not move the account (and its recovery) to their
    // own address: a fresh sign-in first, as for adding a passkey (NIST SP 800-63B §6.1.2.1).
    if (!(Date.now() - p.authTime <= STEP_UP_MAX_AGE_MS))
      throw new ApiError(
        403,
        'step_up_required',
        `Changing your address needs a sign-in within the last ${STEP_UP_MAX_AGE_MS / 60_000} minutes; ` +
          'confirm it is you first.',
      );
    if (p.newEmail === p.currentEmail)
      throw new ApiError(400, 'invalid_request', 'This is already your address.', { field: 'email' });
    const binding = bindingOf(p.userId);
    await this.throttle.send({ tenantId: p.tenantId, ip: p.ip, email: p.newEmail, binding });
    const now = Date.now();
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const id = newId('ec');
    // Fetched before the transaction: the mail is composed inside it, through it.
    const branding = await this.templates.brandingOf(p.tenantId);
    const compose = (kind: 'email_in_use' | 'email_confirmation', db: Tx) =>
      this.templates.compose({
        tenantId: p.tenantId,
        kind,
        locale: p.locale,
        // The code only in the mail that carries it (the other kind has no such variable anyway).
        vars: kind === 'email_confirmation' ? { code, expires_minutes: EMAIL_CODE_TTL_MS / 60_000 } : {},
        db,
        branding,
      });
    await this.db.transaction(async (tx) => {
      const s = new TenantScope(tx, p.tenantId);
      const taken = await s.users.findByEmail(p.newEmail);
      await s.emailCodes.supersede(p.newEmail, binding, now);
      // The row either way (the same work, and the same answer, for a taken address).
      await s.emailCodes.insert({
        id,
        email: p.newEmail,
        userId: p.userId,
        clientId: PROFILE_CLIENT_ID,
        binding,
        codeHash: this.codeHash(id, code),
        createdAt: now,
        expiresAt: now + EMAIL_CODE_TTL_MS,
      });
      await audit(
        tx,
        { type: 'user', id: p.userId },
        { tenantId: p.tenantId, action: 'user.email_change_request', targetType: 'user', targetId: p.userId },
      );
      if (taken) {
        await this.mail.enqueueEmail(tx, {
          tenantId: p.tenantId,
          to: p.newEmail,
          ...(await compose('email_in_use', tx)),
        });
        return;
      }
      await this.mail.enqueueEmail(tx, {
        tenantId: p.tenantId,
        to: p.newEmail,
        ...(await compose('email_confirmation', tx)),
      });
    });
    this.mail.kick();
    return { expiresIn: EMAIL_CODE_TTL_MS / 1000 };
  }

  /**
   * Confirms the address change with the code sent to `newEmail`: a wrong, expired, used or
   * locked code is refused like a sign-in code (400 `invalid_grant` with the attempts left, 429
   * `slow_down` while the address is locked or a check budget is spent). The right one moves
   * the user (see the file header); returns the old address.
   */
  async confirmEmailChange(p: {
    tenantId: string;
    userId: string;
    newEmail: string;
    code: string;
    ip: string;
    actor: Actor;
    /** The account page's locale, for the mail to the old address; default English. */
    locale?: string;
  }): Promise<{ oldEmail: string }> {
    await this.throttle.verify({ tenantId: p.tenantId, ip: p.ip });
    const scope = new TenantScope(this.db, p.tenantId);
    const now = Date.now();
    const row = await scope.emailCodes.latestLive(p.newEmail, bindingOf(p.userId));
    if (!row || row.expires_at <= now || row.user_id !== p.userId)
      throw wrongCode('The code is expired or was never requested; request a new one.');
    // While the address is locked every code is refused alike (NIST SP 800-63B §5.2.2).
    await this.throttle.checkAddress(p.tenantId, p.newEmail);
    const expected = Buffer.from(row.code_hash);
    const given = Buffer.from(this.codeHash(row.id, /^\d{6}$/.test(p.code) ? p.code : 'x'));
    if (!(expected.length === given.length && timingSafeEqual(expected, given))) {
      // Counted by a conditional UPDATE, so parallel guesses share the five attempts.
      if (!(await scope.emailCodes.countAttempt(row.id, EMAIL_CODE_MAX_ATTEMPTS)))
        throw wrongCode('Too many attempts; request a new code.');
      await this.throttle.addressFailure(p.tenantId, p.newEmail);
      const left = EMAIL_CODE_MAX_ATTEMPTS - row.attempts - 1;
      throw wrongCode(
        left > 0
          ? `The code is incorrect; ${left} attempt${left === 1 ? '' : 's'} left.`
          : 'The code is incorrect; request a new code.',
      );
    }
    let oldEmail = '';
    const branding = await this.templates.brandingOf(p.tenantId);
    try {
      await this.db.transaction(async (tx) => {
        const s = scope.in(tx);
        if (!(await s.emailCodes.consume(row.id, EMAIL_CODE_MAX_ATTEMPTS, now)))
          throw wrongCode('The code was already used, or its attempts are used up; request a new code.');
        const user = await s.users.find(p.userId);
        if (!user || user.status !== 'active') throw new ApiError(403, 'access_denied', 'This account is disabled.');
        if ((await s.users.findByEmail(p.newEmail))?.id !== undefined) throw inUse();
        oldEmail = user.email;
        if (!(await s.users.changeEmail(user.id, user.email, p.newEmail, now)))
          throw new ApiError(409, 'conflict', 'Your address changed meanwhile; reload the account page.');
        await this.mail.enqueueEmail(tx, {
          tenantId: p.tenantId,
          to: oldEmail,
          ...(await this.templates.compose({
            tenantId: p.tenantId,
            kind: 'email_changed',
            locale: p.locale,
            vars: { old_email: oldEmail, new_email: p.newEmail },
            db: tx,
            branding,
          })),
        });
        await audit(tx, p.actor, {
          tenantId: p.tenantId,
          action: 'user.email_change',
          targetType: 'user',
          targetId: user.id,
          summary: { via: 'account_page', email_verified: true },
        });
      });
    } catch (e) {
      // Another user took the address between our check and the write (the unique index).
      if (isUniqueViolation(e)) throw inUse();
      throw e;
    }
    this.mail.kick();
    return { oldEmail };
  }
}

function inUse(): ApiError {
  return new ApiError(409, 'email_in_use', 'This address already belongs to another account; choose another one.');
}
