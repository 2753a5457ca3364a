/**
 * The sign-in's and client authentication's budgets (NIST SP 800-63B §5.2.2, OWASP ASVS
 * V2.2.1): rate-limiter-flexible limiters over the database (shared/repositories/rate-limits.ts),
 * so every daemon on it shares each budget. docs/security.md has every default and the
 * arithmetic behind it.
 *
 * - Per address, across login transactions: failed code checks, then a lock that doubles with
 *   each further lock within a day; and the codes one address may be sent per hour.
 * - Per login transaction: the resend interval (an atomic counter, so two parallel sends cannot
 *   both pass), keyed by the transaction, so another transaction's send never holds it.
 * - Per IP and per tenant: code sends and checks; per IP: the login form posts.
 * - Client authentication at /token, /revoke and /introspect: failures only, per client and per
 *   IP. A success costs nothing here (no database write, no read): a spent IP budget is also
 *   kept in this process's memory, which the success path consults.
 *
 * A browser that has signed in to an address before (a known device: a cookie only a successful
 * sign-in hands out, see codes.ts) has the address's budgets to itself: its own failure
 * counter and lock, its own hourly mail. An attacker, who has no such cookie, spends only the
 * address's shared ones, so cannot lock that browser out (docs/security.md).
 *
 * A spent budget is an ApiError 429 `slow_down` whose `retry_after` (seconds) the error
 * renderer turns into `Retry-After` (RFC 9110 §10.2.3; RFC 6585 §4).
 */
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { ThrottleConfig } from '../../config.js';
import type { Database } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import { DbRateLimiter } from '../../repositories/index.js';

const DAY_S = 86_400;

/** The 429 of a spent budget: `slow_down` with the seconds to wait (docs/errors.md). */
export function slowDown(retryAfterS: number, message: string): ApiError {
  const retry = Math.max(1, Math.ceil(retryAfterS));
  return new ApiError(429, 'slow_down', message.replace('{s}', String(retry)), { retry_after: retry });
}

/** The key of an address's budgets: the address's own, or a known device's share of them. */
const addressKey = (tenantId: string, email: string, device?: string) =>
  device ? `${tenantId}\n${email}\n${device}` : `${tenantId}\n${email}`;

const seconds = (ms: number) => (ms > 0 ? Math.ceil(ms / 1000) : 1);

/** The throttling budgets; built once by the composition root. */
export class Throttle {
  private readonly addrFail: DbRateLimiter | undefined;
  private readonly addrLocks: DbRateLimiter;
  private readonly addrMail: DbRateLimiter | undefined;
  private readonly resend: DbRateLimiter | undefined;
  private readonly ipSend: DbRateLimiter | undefined;
  private readonly ipVerify: DbRateLimiter | undefined;
  private readonly ipForm: DbRateLimiter | undefined;
  private readonly tenantSend: DbRateLimiter | undefined;
  private readonly tenantVerify: DbRateLimiter | undefined;
  private readonly clientFail: DbRateLimiter | undefined;
  private readonly clientIpFail: DbRateLimiter | undefined;
  /** IPs whose client-authentication budget is spent (IP → until, ms epoch), for the success path. */
  private readonly clientBlocks = new Map<string, number>();

  constructor(
    ds: Database,
    readonly cfg: ThrottleConfig,
    resendIntervalS: number,
  ) {
    const make = (keyPrefix: string, points: number, duration: number) =>
      points > 0 ? new DbRateLimiter(ds, { keyPrefix, points, duration }) : undefined;
    this.addrFail = make('addr-fail', cfg.addressFailures, cfg.addressFailureWindowSeconds);
    this.addrLocks = new DbRateLimiter(ds, { keyPrefix: 'addr-locks', points: 1_000_000, duration: DAY_S });
    this.addrMail = make('addr-mail', cfg.addressMailPerHour, 3600);
    // An interval of 0 turns the resend wait off (a window of 0 would never end).
    this.resend = resendIntervalS > 0 ? make('resend', 1, resendIntervalS) : undefined;
    this.ipSend = make('ip-send', cfg.ipSends, cfg.ipWindowSeconds);
    this.ipVerify = make('ip-verify', cfg.ipVerifies, cfg.ipWindowSeconds);
    this.ipForm = make('ip-form', cfg.ipFormPosts, cfg.ipWindowSeconds);
    this.tenantSend = make('tenant-send', cfg.tenantSendsPerMinute, 60);
    this.tenantVerify = make('tenant-verify', cfg.tenantVerifiesPerMinute, 60);
    this.clientFail = make('client-fail', cfg.clientAuthFailures, cfg.clientAuthWindowSeconds);
    this.clientIpFail = make('client-ip-fail', cfg.clientAuthIpFailures, cfg.clientAuthWindowSeconds);
  }

  /** Consumes a point; a spent budget throws the 429 with `message` ({s}: the seconds to wait). */
  private async take(limiter: DbRateLimiter | undefined, key: string, message: string): Promise<void> {
    if (!limiter) return;
    try {
      await limiter.consume(key);
    } catch (e) {
      if (e instanceof RateLimiterRes) throw slowDown(seconds(e.msBeforeNext), message);
      throw e;
    }
  }

  /** A login form post (POST /login/email-code, /login/verify) from `ip`. */
  formPost(ip: string): Promise<void> {
    return this.take(this.ipForm, ip, 'Too many sign-in attempts from your network; try again in {s} s.');
  }

  /**
   * A code send: the IP's and the tenant's budgets, then the transaction's resend interval,
   * then the address's hourly mail. The same calls for every address, with or without an
   * account (no timing difference, finding 9).
   */
  async send(p: { tenantId: string; ip: string; email: string; binding: string; device?: string }): Promise<void> {
    // Independent counters: changed at once (on SQLite they join one group commit).
    await Promise.all([
      this.take(this.ipSend, p.ip, 'Too many codes were requested from your network; try again in {s} s.'),
      this.take(this.tenantSend, p.tenantId, 'Too many codes are being requested; try again in {s} s.'),
    ]);
    await this.take(
      this.resend,
      `${p.tenantId}\n${p.binding}\n${p.email}`,
      'A code was sent moments ago; wait {s} s before asking for another.',
    );
    await this.take(
      this.addrMail,
      addressKey(p.tenantId, p.email, p.device),
      'Too many codes were sent to this address; try again in {s} s.',
    );
  }

  /** A code check: the IP's and the tenant's budgets (every check, right or wrong). */
  async verify(p: { tenantId: string; ip: string }): Promise<void> {
    await Promise.all([
      this.take(this.ipVerify, p.ip, 'Too many sign-in attempts from your network; try again in {s} s.'),
      this.take(this.tenantVerify, p.tenantId, 'Too many sign-in attempts; try again in {s} s.'),
    ]);
  }

  /**
   * Throws the 429 while the address is locked (its failure budget spent): a right code is
   * refused then like a wrong one, so a guess made during the lock tells nothing.
   */
  async checkAddress(tenantId: string, email: string, device?: string): Promise<void> {
    if (!this.addrFail) return;
    const res = await this.addrFail.get(addressKey(tenantId, email, device));
    if (res && res.consumedPoints >= this.cfg.addressFailures)
      throw slowDown(seconds(res.msBeforeNext), 'Too many wrong codes for this address; try again in {s} s.');
  }

  /**
   * Counts a wrong code against the address, across transactions. The failure that spends the
   * budget locks the address: the first lock of a day lasts `addressLockSeconds`, each further
   * one twice the last, up to a day (growing backoff, NIST SP 800-63B §5.2.2). Throws the 429
   * once the budget is spent.
   */
  async addressFailure(tenantId: string, email: string, device?: string): Promise<void> {
    if (!this.addrFail) return;
    const key = addressKey(tenantId, email, device);
    const res = await this.addrFail.penalty(key);
    const budget = this.cfg.addressFailures;
    if (res.consumedPoints < budget) return;
    let wait = seconds(res.msBeforeNext);
    if (res.consumedPoints === budget) {
      // Exactly one failure spends the budget (the counter is atomic), so one request locks.
      const locks = await this.addrLocks.penalty(key);
      wait = Math.min(this.cfg.addressLockSeconds * 2 ** Math.min(locks.consumedPoints - 1, 20), DAY_S);
      await this.addrFail.block(key, wait);
    }
    throw slowDown(wait, 'Too many wrong codes for this address; try again in {s} s.');
  }

  /**
   * Client authentication, before the credentials are checked: refused while this IP's budget
   * is spent, as far as this process has seen (memory only: no database access on the hot path;
   * every daemon that sees a further failure from the IP learns of it). A client's own spent
   * budget does not refuse its right secret: anyone can fail on a client's behalf, and a
   * client secret (256 random bits) is not guessed in any number of tries, so blocking it would
   * only hand out a denial of service.
   */
  clientAuthBlocked(ip: string): void {
    if (this.clientBlocks.size === 0) return;
    const until = this.clientBlocks.get(ip);
    if (until === undefined) return;
    const now = Date.now();
    if (until <= now) this.clientBlocks.delete(ip);
    else throw slowDown((until - now) / 1000, 'Too many failed client authentications; try again in {s} s.');
  }

  /**
   * A failed client authentication: counts it for the client and for the IP. Throws the 429
   * (to be answered instead of the 401) when either budget is spent; a spent IP budget is also
   * remembered for {@link clientAuthBlocked}.
   */
  async clientAuthFailure(clientId: string, ip: string): Promise<void> {
    let untilMs = 0;
    if (this.clientIpFail) {
      const res = await this.clientIpFail.penalty(ip);
      if (res.consumedPoints > this.clientIpFail.points) {
        untilMs = Date.now() + Math.max(res.msBeforeNext, 1000);
        // Bounded: a flood of addresses cannot grow it without limit.
        if (this.clientBlocks.size > 10_000) this.clientBlocks.clear();
        this.clientBlocks.set(ip, untilMs);
      }
    }
    if (this.clientFail) {
      const res = await this.clientFail.penalty(clientId);
      if (res.consumedPoints > this.clientFail.points)
        untilMs = Math.max(untilMs, Date.now() + Math.max(res.msBeforeNext, 1000));
    }
    if (untilMs)
      throw slowDown((untilMs - Date.now()) / 1000, 'Too many failed client authentications; try again in {s} s.');
  }
}
