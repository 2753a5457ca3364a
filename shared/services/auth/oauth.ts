/**
 * Authorization requests, authorization codes, token families with rotating refresh tokens,
 * consents and revocation. Every one-time artifact is consumed with a conditional UPDATE and
 * an affected-row check, so exactly one of several concurrent redemptions wins.
 *
 * A code, a refresh token or an authorization request is found by its hash (or random id)
 * before its tenant is known (lookups.ts); everything after that goes through the scope of the
 * tenant the lookup returned. The grants of the token endpoint run in one transaction each; a
 * replayed code or refresh token revokes its family afterwards, in a statement of its own, so
 * the revocation is not rolled back with the refused request.
 */
import { newId, randomToken } from '../../crypto.js';
import type { Client } from '../../db/entities.js';
import { isUniqueViolation, retryTransient, type Database, type Db, type Tx } from '../../db/index.js';
import { InvalidGrant, InvalidScope } from '../../errors.js';
import {
  Lookups,
  TenantScope,
  type AuthCodeRow,
  type ConsentRow,
  type FamilyRow,
  type LoginUser,
  type PolicyVersions,
} from '../../repositories/index.js';
import { recordAuthEvent } from './history.js';
import { tokenHash, verifyS256 } from './pkce.js';
import { AUTH_CODE_TTL_MS, AUTH_REQUEST_TTL_MS, REFRESH_TOKEN_TTL_MS } from './policy.js';
import type { ResponseMode } from '../signed-responses.js';

export type { ConsentRow, FamilyRow };
/** A redeemed authorization code. */
export type CodeRow = AuthCodeRow;

/** The validated parameters of an authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1). */
export interface AuthParams {
  client_id: string;
  redirect_uri: string;
  response_type: 'code';
  scope: string[];
  state?: string;
  nonce?: string;
  /** Absent only for a confidential client registered without PKCE that sent none (authorize.ts). */
  code_challenge?: string;
  code_challenge_method?: 'S256';
  prompt?: string[];
  max_age?: number;
  login_hint?: string;
  /** The user's preferred languages (OIDC Core §3.1.2.1): the login and consent pages' language. */
  ui_locales?: string;
  /** RFC 8707 §2 resource indicators, checked against the client's audiences (authorize.ts). */
  resource?: string[];
  /** How the response goes back (docs/jarm.md); absent: `query`. */
  response_mode?: ResponseMode;
  /**
   * How the request arrived when not as plain parameters: pushed (RFC 9126) or a signed request
   * object (RFC 9101). Such a request is continued after sign-in by its saved id, never by
   * re-sending its parameters (authorization.ts; docs/par.md).
   */
  via?: 'par' | 'jar';
  /** RFC 9449 §10: the thumbprint of the DPoP key the code is bound to. */
  dpop_jkt?: string;
}

/** A saved authorization request, found by its id. */
export interface SavedAuthRequest {
  tenantId: string;
  params: AuthParams;
  consumed: boolean;
}

/** auth_codes.code_challenge of a code issued without PKCE (a real challenge is 43 to 128 characters). */
const NO_CHALLENGE = '';

/** The version of the consent screen a recorded consent was given on. */
export const CONSENT_VERSION = 1;

/**
 * A one-time credential was presented again. The service has revoked `familyId` (outside the
 * refused request's transaction) by the time the caller sees this; the answer is invalid_grant.
 */
export class ReuseDetected extends InvalidGrant {
  constructor(
    readonly familyId: string,
    readonly tenantId: string,
    readonly reason: 'code_replay' | 'refresh_reuse',
    description: string,
  ) {
    super(description);
  }
}

/** The authorization endpoint's and the token endpoint's state: requests, codes, tokens, consents. */
export class OAuthService {
  private readonly lookups: Lookups;

  constructor(private readonly db: Database) {
    this.lookups = new Lookups(db);
  }

  // ---- authorization requests (the "authorization challenge" a login continues) ----

  async saveAuthRequest(tenantId: string, params: AuthParams): Promise<string> {
    const id = randomToken(24);
    const now = Date.now();
    await new TenantScope(this.db, tenantId).authRequests.insert({
      id,
      clientId: params.client_id,
      params,
      createdAt: now,
      expiresAt: now + AUTH_REQUEST_TTL_MS,
    });
    return id;
  }

  /** An unexpired authorization request (consumed or not), or undefined. */
  async getAuthRequest(id: string): Promise<SavedAuthRequest | undefined> {
    if (!id || id.length > 64) return undefined;
    const r = await this.lookups.authRequestById(id);
    if (!r || r.expiresAt <= Date.now()) return undefined;
    return { tenantId: r.tenantId, params: r.params as AuthParams, consumed: r.consumed };
  }

  /** One winner: true for the one caller that consumed it (a sign-in consumes its own, sign-in.ts). */
  consumeAuthRequest(tenantId: string, id: string): Promise<boolean> {
    return new TenantScope(this.db, tenantId).authRequests.consume(id, Date.now());
  }

  // ---- authorization codes ----

  async issueCode(p: {
    tenantId: string;
    params: AuthParams;
    userId: string;
    sessionId: string;
    authTime: number;
    acr: string;
    amr: string[];
  }): Promise<string> {
    const code = randomToken(32);
    const now = Date.now();
    await new TenantScope(this.db, p.tenantId).authCodes.insert({
      id: tokenHash(code),
      client_id: p.params.client_id,
      user_id: p.userId,
      session_id: p.sessionId,
      family_id: newId('fam'),
      redirect_uri: p.params.redirect_uri,
      scope: p.params.scope,
      nonce: p.params.nonce ?? null,
      // The empty string is "issued without a challenge" (the column is NOT NULL): redeemCode
      // then refuses a verifier, as it refuses a code with a challenge redeemed without one.
      code_challenge: p.params.code_challenge ?? NO_CHALLENGE,
      auth_time: p.authTime,
      acr: p.acr,
      amr: p.amr,
      resource: p.params.resource?.length ? p.params.resource : null,
      dpop_jkt: p.params.dpop_jkt ?? null,
      created_at: now,
      expires_at: now + AUTH_CODE_TTL_MS,
    });
    return code;
  }

  /**
   * The authorization_code grant (RFC 6749 §4.1.3 + RFC 7636 §4.6), in one transaction: redeems
   * the code, checks that its session is live and its user active, and creates the token family
   * (and a refresh token when the client may refresh). A replayed code revokes the family it
   * already produced (RFC 6749 §4.1.2: "SHOULD revoke all tokens previously issued").
   */
  async exchangeCode(
    client: Client,
    p: { code: string; redirectUri: string | undefined; codeVerifier: string | undefined },
  ): Promise<{ code: CodeRow; refreshToken?: string }> {
    return this.revokingOnReuse(() => this.db.transaction((tx) => this.exchangeCodeIn(tx, client, p)));
  }

  /**
   * exchangeCode's work in the caller's transaction (the authorization_code grant issues its
   * tokens in it too, shared/services/grants/). A replay throws ReuseDetected: the caller rolls
   * back, then revokes the family with `revokeFamily`.
   */
  async exchangeCodeIn(
    tx: Tx,
    client: Client,
    p: { code: string; redirectUri: string | undefined; codeVerifier: string | undefined; dpopJkt?: string },
  ): Promise<{ code: CodeRow; refreshToken?: string }> {
    const { row, scope } = await this.redeemCode(tx, { ...p, clientId: client.client_id });
    // RFC 9449 §10: a code asked for with dpop_jkt is redeemed only with a proof of that key.
    if (row.dpop_jkt !== null && row.dpop_jkt !== p.dpopJkt)
      throw new InvalidGrant('The authorization code is bound to another DPoP key (dpop_jkt).');
    if (!(await scope.sessions.isLiveWithActiveUser(row.session_id)))
      throw new InvalidGrant('The session behind this code has ended or the account is disabled.');
    const consent = client.first_party
      ? undefined
      : await this.findConsent(client.tenant_id, row.user_id, client.client_id, tx);
    await scope.tokens.createFamily({
      id: row.family_id,
      userId: row.user_id,
      clientId: client.client_id,
      sessionId: row.session_id,
      consentId: consent?.id ?? null,
      scope: row.scope,
      resource: row.resource,
      // RFC 9449 §5: a public client's refresh tokens are bound to the key of the proof that
      // got them; a confidential client's are bound by its authentication instead.
      dpopJkt: client.client_type === 'public' ? (p.dpopJkt ?? null) : null,
      createdAt: Date.now(),
    });
    const refreshToken = client.grant_types.includes('refresh_token')
      ? await this.issueRefreshToken(scope, row.family_id)
      : undefined;
    await recordAuthEvent(scope, {
      userId: row.user_id,
      event: 'token',
      outcome: 'success',
      clientId: client.client_id,
    });
    return { code: row, refreshToken };
  }

  /** Finds and consumes a code, checking it against the client, redirect URI and PKCE verifier. */
  private async redeemCode(
    tx: Tx,
    p: { code: string; clientId: string; redirectUri: string | undefined; codeVerifier: string | undefined },
  ): Promise<{ row: CodeRow; scope: TenantScope }> {
    const row = await new Lookups(tx).authCodeByHash(tokenHash(p.code));
    if (!row) throw new InvalidGrant('The authorization code is invalid.');
    const replayed = () =>
      new ReuseDetected(
        row.family_id,
        row.tenant_id,
        'code_replay',
        'The authorization code was already used; tokens issued from it are revoked.',
      );
    if (row.client_id !== p.clientId) throw new InvalidGrant('The authorization code was issued to another client.');
    if (row.consumed_at !== null) throw replayed();
    if (row.expires_at <= Date.now()) throw new InvalidGrant('The authorization code has expired.');
    if (p.redirectUri !== row.redirect_uri)
      throw new InvalidGrant('redirect_uri does not match the authorization request.');
    // RFC 7636 §4.6: a code issued with a challenge redeems only with its verifier. One issued
    // without (a confidential client registered without PKCE) is refused if a verifier comes
    // anyway: a verifier for no challenge means the request was not the one the code answered,
    // the PKCE downgrade of RFC 9700 §2.1.1 and OAuth 2.1 §4.1.3.
    if (row.code_challenge === NO_CHALLENGE) {
      if (p.codeVerifier !== undefined)
        throw new InvalidGrant('code_verifier was sent, but the authorization request had no code_challenge.');
    } else if (!p.codeVerifier || !verifyS256(p.codeVerifier, row.code_challenge))
      throw new InvalidGrant('The PKCE code_verifier does not match the code_challenge.');
    const scope = new TenantScope(tx, row.tenant_id);
    if (!(await scope.authCodes.consume(row.id, Date.now()))) throw replayed();
    return { row, scope };
  }

  // ---- token families and refresh tokens ----

  /** Revokes a token family (RFC 7009 §2, reuse detection). */
  async revokeFamily(tenantId: string, familyId: string, reason: string): Promise<void> {
    await new TenantScope(this.db, tenantId).tokens.revokeFamily(familyId, reason, Date.now());
  }

  private async issueRefreshToken(scope: TenantScope, familyId: string): Promise<string> {
    const token = randomToken(32);
    const now = Date.now();
    await scope.tokens.insertRefreshToken({
      id: tokenHash(token),
      familyId,
      createdAt: now,
      expiresAt: now + REFRESH_TOKEN_TTL_MS,
    });
    return token;
  }

  /**
   * The refresh_token grant (RFC 6749 §6), in the caller's transaction (as exchangeCodeIn):
   * refuses a wider scope and a disabled user; presenting a consumed token again is reuse (the
   * caller revokes the whole family). With `rotate` (RFC 9700 §4.14.2) the presented token is
   * consumed and a new one issued; without it (a client under the FAPI 2.0 profile, whose
   * refresh tokens its key and DPoP key already bind: §5.3.2.1) the same token stays valid, so
   * a retry after a lost response succeeds.
   */
  async rotateRefreshTokenIn(
    tx: Tx,
    client: Client,
    token: string,
    opts: { requestedScope?: string[]; dpopJkt?: string; rotate: boolean },
  ): Promise<{ family: FamilyRow; refreshToken: string }> {
    const { requestedScope, dpopJkt } = opts;
    const r = await new Lookups(tx).refreshTokenByHash(tokenHash(token));
    if (!r) throw new InvalidGrant('The refresh token is invalid.');
    const scope = new TenantScope(tx, r.tenant_id);
    const family = await scope.tokens.family(r.family_id);
    if (!family || family.client_id !== client.client_id)
      throw new InvalidGrant('The refresh token was issued to another client.');
    // RFC 9449 §5: a bound refresh token is refused without a proof of its key (nothing spent).
    if (family.dpop_jkt !== null && family.dpop_jkt !== dpopJkt)
      throw new InvalidGrant('The refresh token is bound to another DPoP key.');
    const reused = () =>
      new ReuseDetected(
        family.id,
        r.tenant_id,
        'refresh_reuse',
        'The refresh token was already used; the token family is revoked.',
      );
    if (r.consumed_at !== null) throw reused();
    if (family.revoked_at !== null) throw new InvalidGrant('The refresh token has been revoked.');
    if (r.expires_at <= Date.now()) throw new InvalidGrant('The refresh token has expired.');
    if (opts.rotate && !(await scope.tokens.consumeRefreshToken(r.id, Date.now()))) throw reused();
    if (requestedScope?.some((s) => !family.scope.includes(s)))
      throw new InvalidScope('A refreshed token cannot widen the original scope.');
    const status = family.user_id ? await scope.users.status(family.user_id) : undefined;
    if (family.user_id && status !== 'active') throw new InvalidGrant('The account is disabled.');
    return { family, refreshToken: opts.rotate ? await this.issueRefreshToken(scope, family.id) : token };
  }

  /** Revokes the family of a replayed code or refresh token, in its own statement, and rethrows. */
  private async revokingOnReuse<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ReuseDetected) await this.revokeFamily(e.tenantId, e.familyId, e.reason);
      throw e;
    }
  }

  /** RFC 7009: revoking a refresh token revokes its family; unknown tokens are ignored. */
  async revokeRefreshToken(token: string, clientId: string): Promise<boolean> {
    const r = await this.lookups.refreshTokenByHash(tokenHash(token));
    if (!r) return false;
    const scope = new TenantScope(this.db, r.tenant_id);
    const family = await scope.tokens.family(r.family_id);
    if (!family || family.client_id !== clientId) return false;
    await scope.tokens.revokeFamily(family.id, 'revoked', Date.now());
    return true;
  }

  /** RFC 7009 for an access token: its jti is refused until it expires. Idempotent. */
  async revokeAccessToken(jti: string, tenantId: string, expiresAtMs: number): Promise<void> {
    try {
      // A lost certification race or deadlock left nothing written: it may run again.
      await retryTransient(() =>
        new TenantScope(this.db, tenantId).tokens.revokeAccessToken(jti, expiresAtMs, Date.now()),
      );
    } catch (e) {
      // Already revoked: revocation is idempotent. Anything else (the database failing) is
      // passed on, so that /revoke never acknowledges a revocation it did not record.
      if (!isUniqueViolation(e)) throw e;
    }
  }

  /** True when the access token's jti or its family has been revoked. */
  isAccessTokenRevoked(tenantId: string, jti: string, familyId: string | undefined): Promise<boolean> {
    return new TenantScope(this.db, tenantId).tokens.isAccessTokenRevoked(jti, familyId);
  }

  // ---- users, as the token and userinfo endpoints see them ----

  /** The status of a user of the tenant, or undefined when there is none (a client's own token). */
  userStatus(tenantId: string, userId: string): Promise<string | undefined> {
    return new TenantScope(this.db, tenantId).users.status(userId);
  }

  /** A user with the state of its tenant (OIDC Core §5.3 UserInfo), or undefined. */
  userInfo(tenantId: string, userId: string): Promise<(LoginUser & { lifecycle_state: string }) | undefined> {
    return new TenantScope(this.db, tenantId).users.withTenantState(userId);
  }

  // ---- consents ----

  /** The user's live consent at a client. `db`: the caller's transaction, when it reads inside one. */
  async findConsent(
    tenantId: string,
    userId: string,
    clientId: string,
    db: Db = this.db,
  ): Promise<ConsentRow | undefined> {
    const c = await new TenantScope(db, tenantId).consents.latest(userId, clientId);
    return c && c.expires_at !== null && c.expires_at <= Date.now() ? undefined : c;
  }

  /**
   * Records a grant of `scopes` under the tenant's policy versions in force (`policyVersions`,
   * from its settings; none when omitted). An existing consent is widened rather than duplicated; when it gains
   * scopes, or the versions changed since, it takes the new versions and grant time.
   */
  async grantConsent(p: {
    tenantId: string;
    userId: string;
    clientId: string;
    scopes: string[];
    policyVersions?: PolicyVersions;
  }): Promise<ConsentRow> {
    const scope = new TenantScope(this.db, p.tenantId);
    const existing = await this.findConsent(p.tenantId, p.userId, p.clientId);
    const now = Date.now();
    const versions = {
      privacy_policy_version: p.policyVersions?.privacyPolicyVersion ?? null,
      tos_version: p.policyVersions?.tosVersion ?? null,
    };
    if (existing) {
      const scopes = [...new Set([...existing.scopes, ...p.scopes])];
      const changed =
        scopes.length !== existing.scopes.length ||
        existing.privacy_policy_version !== versions.privacy_policy_version ||
        existing.tos_version !== versions.tos_version;
      if (!changed) return existing;
      await scope.consents.regrant(existing.id, { scopes, ...versions, now });
      return { ...existing, scopes, ...versions, granted_at: now };
    }
    const c: ConsentRow = {
      id: newId('cns'),
      tenant_id: p.tenantId,
      user_id: p.userId,
      client_id: p.clientId,
      scopes: [...new Set(p.scopes)],
      granted_at: now,
      expires_at: null,
      ...versions,
      consent_version: CONSENT_VERSION,
    };
    const { tenant_id: _t, ...row } = c;
    await scope.consents.insert(row);
    return c;
  }
}
