/**
 * Email-code sign-in: sending a code and checking it (docs/security.md).
 *
 * - A code is six digits, stored as an HMAC, valid ten minutes, with five attempts counted by a
 *   conditional UPDATE so concurrent guesses cannot exceed the limit.
 * - A code belongs to the login transaction that asked for it (its `binding`: the
 *   authorization request, or the direct-auth API's binding). Only a check in that transaction
 *   sees it, so guesses made elsewhere never burn it; a new code supersedes only that
 *   transaction's code, and the resend interval (30 s by default; an atomic counter, so two
 *   parallel sends cannot both pass) holds only that transaction.
 * - Budgets across transactions (throttle.ts): wrong codes per address with a growing lock,
 *   mail per address per hour, sends and checks per IP and per tenant.
 * - Send answers the same whether or not the address has an account (no enumeration), and does
 *   the same work: the same budgets, a code row and an outbox row either way; the outbox row of
 *   an address that gets no mail (no account, unless the tenant allows sign-up) is marked to be
 *   dropped by the deliverer unsent.
 * - A right code is a proof (sign-in-proof.ts): it is consumed, and the success recorded, in the
 *   sign-in service's transaction that also creates the session, so a login's writes commit once.
 */
import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { deriveKey, newId, randomToken } from '../../crypto.js';
import type { Database, Tx } from '../../db/index.js';
import { ApiError, InvalidGrant } from '../../errors.js';
import { TenantScope, type LoginUser } from '../../repositories/index.js';
import { recordAuthEvent, userDisabled, type RequestMeta } from './history.js';
import type { SignInProof, Spent } from './sign-in-proof.js';
import { EMAIL_CODE_MAX_ATTEMPTS, EMAIL_CODE_TTL_MS } from './policy.js';
import type { Throttle } from './throttle.js';
import { emailVerified } from '../standard-claims.js';
import { MailTemplateService, type MailComposer } from '../mail-templates.js';

export type { LoginUser };

/** The authentication context class and methods of an email-code sign-in (OIDC Core §2). */
export const ACR_EMAIL_CODE = 'urn:iam:acr:email-code';
export const AMR_EMAIL_CODE = ['otp', 'email'];
/** The direct-auth provider id of an email-code sign-in. */
export const EMAIL_CODE_PROVIDER = 'email_code';

/** Where login mail goes: the outbox, written in the caller's transaction, then kicked. */
export interface MailQueue {
  enqueueEmail(
    tx: Tx,
    msg: { tenantId: string; to: string; subject: string; text: string; html?: string; drop?: boolean },
  ): Promise<string>;
  kick(): void;
}

/**
 * The login transaction a code belongs to, as the caller names it (for instance
 * `ar:<authorization request id>`); stored hashed. The routes build it (docs/security.md).
 */
export type CodeBinding = string;

/** How long a browser stays a known device of an address after signing in to it. */
export const KNOWN_DEVICE_TTL_S = 180 * 86_400;

/** The stored form of a binding. */
const bindingHash = (b: CodeBinding): string => createHash('sha256').update(b).digest('base64url');

/** The parameters of a code check. */
export interface VerifyCodeInput {
  tenantId: string;
  clientId: string;
  email: string;
  code: string;
  /** The transaction's binding; with several, the first that has a code is used. */
  binding: CodeBinding | CodeBinding[];
  /** The browser's known-device cookie, if it sent one. */
  knownDevice?: string;
  allowSignup: boolean;
  meta: RequestMeta;
}

/** Sends and checks email codes (see the file header for the rules). */
export class EmailCodeService {
  private readonly codeKey: Buffer;
  private readonly deviceKey: Buffer;
  private readonly templates: MailComposer;

  /**
   * `throttle` holds every budget, the resend interval included; `templates` composes the code's
   * mail (the container's; without one, the defaults and the tenant's overrides, unbranded).
   */
  constructor(
    private readonly db: Database,
    secretKey: string,
    private readonly mail: MailQueue,
    issuerHost: string,
    private readonly throttle: Throttle,
    templates?: MailComposer,
  ) {
    this.codeKey = deriveKey(secretKey, 'email-code');
    this.deviceKey = deriveKey(secretKey, 'known-device');
    this.templates = templates ?? new MailTemplateService(db, { issuerHost });
  }

  private deviceMac(tenantId: string, email: string, nonce: string, exp: number): string {
    return createHmac('sha256', this.deviceKey).update(`${tenantId}\n${email}\n${nonce}\n${exp}`).digest('base64url');
  }

  /**
   * A known-device token for a browser that has just signed in to `email` (the routes set it
   * as an HttpOnly cookie): `<nonce>.<expiry s>.<HMAC of tenant, address, nonce, expiry>`. With
   * it, that browser has the address's budgets to itself (throttle.ts).
   */
  knownDeviceToken(tenantId: string, email: string): string {
    const nonce = randomToken(12);
    const exp = Math.floor(Date.now() / 1000) + KNOWN_DEVICE_TTL_S;
    return `${nonce}.${exp}.${this.deviceMac(tenantId, email, nonce, exp)}`;
  }

  /** The nonce of a valid, unexpired known-device token for this address; else undefined. */
  private knownDevice(tenantId: string, email: string, token: string | undefined): string | undefined {
    const m = token ? /^([A-Za-z0-9_-]{1,32})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token) : null;
    if (!m) return undefined;
    const exp = Number(m[2]);
    if (exp * 1000 <= Date.now()) return undefined;
    const expected = Buffer.from(this.deviceMac(tenantId, email, m[1], exp));
    const given = Buffer.from(m[3]);
    return expected.length === given.length && timingSafeEqual(expected, given) ? m[1] : undefined;
  }

  private codeHash(id: string, code: string): string {
    return createHmac('sha256', this.codeKey).update(`${id}:${code}`).digest('base64url');
  }

  /** Issues a code for `email` in the client's tenant. Resolves the same way for unknown addresses. */
  async sendCode(p: {
    tenantId: string;
    clientId: string;
    email: string;
    binding: CodeBinding;
    allowSignup: boolean;
    meta: RequestMeta;
    /** The browser's known-device cookie, if it sent one. */
    knownDevice?: string;
    /** The login page's locale (ui_locales / Accept-Language), for the mail; default English. */
    locale?: string;
  }): Promise<{ expiresIn: number }> {
    const binding = bindingHash(p.binding);
    await this.throttle.send({
      tenantId: p.tenantId,
      ip: p.meta.ip ?? '',
      email: p.email,
      binding,
      device: this.knownDevice(p.tenantId, p.email, p.knownDevice),
    });
    const now = Date.now();
    const scope = new TenantScope(this.db, p.tenantId);
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const id = newId('ec');
    // Composed before the transaction, which stays as short as it was; a tenant's broken
    // override falls back to the default here and never stops the sign-in (mail-templates.ts).
    const mail = await this.templates.compose({
      tenantId: p.tenantId,
      kind: 'sign_in_code',
      locale: p.locale,
      vars: { code, expires_minutes: EMAIL_CODE_TTL_MS / 60_000 },
    });
    await this.db.transaction(async (tx) => {
      const s = scope.in(tx);
      const user = await s.users.findByEmail(p.email);
      await s.emailCodes.supersede(p.email, binding, now);
      await s.emailCodes.insert({
        id,
        email: p.email,
        userId: user?.id ?? null,
        clientId: p.clientId,
        binding,
        codeHash: this.codeHash(id, code),
        createdAt: now,
        expiresAt: now + EMAIL_CODE_TTL_MS,
      });
      const deliver = user ? user.status === 'active' : p.allowSignup;
      // The same row either way (finding 9: a send must not take longer for an account); the
      // deliverer drops the undeliverable one unsent.
      await this.mail.enqueueEmail(tx, {
        tenantId: p.tenantId,
        to: p.email,
        drop: !deliver,
        ...mail,
      });
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
   * Checks a code (the sign-in method of the email code, sign-in-proof.ts): a wrong, expired or
   * locked one is refused here, its failure recorded. The right one is a proof whose `spend`,
   * in the sign-in's transaction, consumes the code, creates the user when sign-up is on and
   * records the success, so a login's writes commit once (sign-in.ts).
   */
  async prove(p: VerifyCodeInput): Promise<SignInProof> {
    const device = this.knownDevice(p.tenantId, p.email, p.knownDevice);
    const now = Date.now();
    const scope = new TenantScope(this.db, p.tenantId);
    const fail = async (
      reason: string,
      message: string,
      userId: string | null = null,
      error: Error = new InvalidGrant(message),
    ): Promise<never> => {
      await recordAuthEvent(scope, {
        userId,
        event: 'email_code_verify',
        outcome: 'failure',
        reason,
        clientId: p.clientId,
        meta: p.meta,
      });
      throw error;
    };
    // The network's and the tenant's check budgets; a throttled attempt is in the history too,
    // as the address's (without the account lookup a locked address would cost).
    try {
      await this.throttle.verify({ tenantId: p.tenantId, ip: p.meta.ip ?? '' });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return fail('throttled', e.message, null, e);
    }
    let row;
    for (const b of Array.isArray(p.binding) ? p.binding : [p.binding]) {
      row = await scope.emailCodes.latestLive(p.email, bindingHash(b));
      if (row) break;
    }
    if (!row || row.expires_at <= now) {
      // Still attributed to the account, when there is one: the user's history shows every attempt.
      const owner = row?.user_id ?? (await scope.users.findByEmail(p.email))?.id ?? null;
      return fail(
        row ? 'code_expired' : 'no_code',
        'The code is expired or was never requested; request a new one.',
        owner,
      );
    }
    if (row.client_id !== p.clientId)
      return fail('client_mismatch', 'The code was requested by another client.', row.user_id);
    const code = row;
    // While the address is locked every code is refused alike, the right one too, so a guess
    // made then tells nothing (NIST SP 800-63B §5.2.2).
    try {
      await this.throttle.checkAddress(p.tenantId, p.email, device);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return fail('address_locked', e.message, code.user_id, e);
    }
    const expected = Buffer.from(code.code_hash);
    const given = Buffer.from(this.codeHash(code.id, /^\d{6}$/.test(p.code) ? p.code : 'x'));
    const matches = expected.length === given.length && timingSafeEqual(expected, given);
    // Every attempt is counted by a conditional UPDATE (attempts < max), so parallel guesses
    // share one budget and a right code after the budget is spent is refused like a wrong one.
    const exhausted = () => fail('attempts_exhausted', 'Too many attempts; request a new code.', code.user_id);
    if (!matches) {
      if (!(await scope.emailCodes.countAttempt(code.id, EMAIL_CODE_MAX_ATTEMPTS))) return exhausted();
      // Counted against the address too, across transactions: the guess was evaluated.
      try {
        await this.throttle.addressFailure(p.tenantId, p.email, device);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        return fail('address_locked', e.message, code.user_id, e);
      }
      const left = EMAIL_CODE_MAX_ATTEMPTS - code.attempts - 1;
      return fail(
        'wrong_code',
        left > 0
          ? `The code is incorrect; ${left} attempt${left === 1 ? '' : 's'} left.`
          : 'The code is incorrect; request a new code.',
        code.user_id,
      );
    }
    // Spent since it was read: used by a parallel request, or its budget used up by parallel guesses.
    const spentMeanwhile = async (): Promise<never> =>
      (await scope.emailCodes.consumedAt(code.id)) === null
        ? exhausted()
        : fail('already_used', 'The code was already used.', code.user_id);
    const disabled = async (user: LoginUser): Promise<never> => {
      await recordAuthEvent(scope, {
        userId: user.id,
        event: 'email_code_verify',
        outcome: 'failure',
        reason: 'user_disabled',
        clientId: p.clientId,
        meta: p.meta,
      });
      throw userDisabled();
    };
    return {
      acr: ACR_EMAIL_CODE,
      amr: AMR_EMAIL_CODE,
      authTime: now,
      provider: EMAIL_CODE_PROVIDER,
      spend: async (tx: Tx): Promise<Spent> => {
        const s = scope.in(tx);
        // The right code: count the attempt and consume the code in one write.
        if (!(await s.emailCodes.consume(code.id, EMAIL_CODE_MAX_ATTEMPTS, now))) return { refused: spentMeanwhile };
        let user = await s.users.findByEmail(p.email);
        if (!user) {
          if (!p.allowSignup)
            return {
              refused: () => fail('no_account', 'The code is expired or was never requested; request a new one.'),
            };
          user = await s.users.insertSignup({
            id: newId('usr'),
            email: p.email,
            name: p.email.split('@')[0].slice(0, 200),
            now,
          });
        }
        // The code stays consumed (the refusal commits), then the failure is recorded.
        const found = user;
        if (found.status !== 'active') return { refused: () => disabled(found) };
        // The right code proves the address (OIDC Core §5.1 email_verified), whatever an upstream said.
        if (!emailVerified(found)) await s.users.setEmailVerified(found.id, true, now);
        await recordAuthEvent(s, {
          userId: found.id,
          event: 'email_code_verify',
          outcome: 'success',
          clientId: p.clientId,
          meta: p.meta,
        });
        return { user: found };
      },
    };
  }
}
