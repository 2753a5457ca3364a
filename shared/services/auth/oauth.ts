/**
 * Authorization requests, authorization codes, token families with rotating refresh tokens,
 * consents and revocation. Every one-time artifact is consumed with a conditional UPDATE and
 * an affected-row check, so exactly one of several concurrent redemptions wins.
 */
import type { DataSource } from 'typeorm';
import { newId, randomToken } from '../../crypto.js';
import { all, exec, json, num, one, type Db } from '../../db/sql.js';
import { InvalidGrant } from '../../errors.js';
import { tokenHash, verifyS256 } from './pkce.js';
import { AUTH_CODE_TTL_MS, AUTH_REQUEST_TTL_MS, REFRESH_TOKEN_TTL_MS } from './policy.js';

/** The validated parameters of an authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1). */
export interface AuthParams {
  client_id: string;
  redirect_uri: string;
  response_type: 'code';
  scope: string[];
  state?: string;
  nonce?: string;
  code_challenge: string;
  code_challenge_method: 'S256';
  prompt?: string[];
  max_age?: number;
  login_hint?: string;
}

export interface CodeRow {
  id: string;
  tenant_id: string;
  client_id: string;
  user_id: string;
  session_id: string;
  family_id: string;
  redirect_uri: string;
  scope: string[];
  nonce: string | null;
  code_challenge: string;
  auth_time: number;
  acr: string;
  amr: string[];
  expires_at: number;
  consumed_at: number | null;
}

export interface FamilyRow {
  id: string;
  tenant_id: string;
  user_id: string | null;
  client_id: string;
  session_id: string | null;
  consent_id: string | null;
  scope: string[];
  revoked_at: number | null;
}

export interface ConsentRow {
  id: string;
  tenant_id: string;
  user_id: string;
  client_id: string;
  scopes: string[];
  granted_at: number;
  expires_at: number | null;
  privacy_policy_version: string | null;
  tos_version: string | null;
  consent_version: number;
}

export const CONSENT_VERSION = 1;

/**
 * A one-time credential was presented again. The caller revokes `familyId` outside any
 * transaction (so the revocation is not rolled back with the failed request) and answers
 * invalid_grant.
 */
export class ReuseDetected extends InvalidGrant {
  constructor(
    readonly familyId: string,
    readonly reason: 'code_replay' | 'refresh_reuse',
    description: string,
  ) {
    super(description);
  }
}

export class OAuthStore {
  constructor(private readonly ds: DataSource) {}

  // ---- authorization requests (the "authorization challenge" a login continues) ----

  async saveAuthRequest(tenantId: string, params: AuthParams): Promise<string> {
    const id = randomToken(24);
    const now = Date.now();
    await exec(
      this.ds,
      'INSERT INTO auth_requests (id, tenant_id, client_id, params, created_at, expires_at, consumed_at) VALUES (?, ?, ?, ?, ?, ?, NULL)',
      [id, tenantId, params.client_id, JSON.stringify(params), now, now + AUTH_REQUEST_TTL_MS],
    );
    return id;
  }

  async getAuthRequest(id: string): Promise<{ tenantId: string; params: AuthParams; consumed: boolean } | undefined> {
    if (!id || id.length > 64) return undefined;
    const r = await one<Record<string, unknown>>(
      this.ds,
      'SELECT tenant_id, params, expires_at, consumed_at FROM auth_requests WHERE id = ?',
      [id],
    );
    if (!r || num(r.expires_at) <= Date.now()) return undefined;
    return { tenantId: String(r.tenant_id), params: json<AuthParams>(r.params), consumed: r.consumed_at !== null };
  }

  async consumeAuthRequest(db: Db, id: string): Promise<boolean> {
    return (
      (await exec(db, 'UPDATE auth_requests SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL', [
        Date.now(),
        id,
      ])) === 1
    );
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
    await exec(
      this.ds,
      `INSERT INTO auth_codes (id, tenant_id, client_id, user_id, session_id, family_id, redirect_uri, scope, nonce, code_challenge, auth_time, acr, amr, created_at, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      [
        tokenHash(code),
        p.tenantId,
        p.params.client_id,
        p.userId,
        p.sessionId,
        newId('fam'),
        p.params.redirect_uri,
        p.params.scope.join(' '),
        p.params.nonce ?? null,
        p.params.code_challenge,
        p.authTime,
        p.acr,
        JSON.stringify(p.amr),
        now,
        now + AUTH_CODE_TTL_MS,
      ],
    );
    return code;
  }

  /**
   * Redeems a code (RFC 6749 §4.1.3 + RFC 7636 §4.6). A replayed code revokes the token family
   * it already produced (RFC 6749 §4.1.2: "SHOULD revoke all tokens previously issued").
   */
  async redeemCode(
    db: Db,
    p: { code: string; clientId: string; redirectUri: string | undefined; codeVerifier: string | undefined },
  ): Promise<CodeRow> {
    const r = await one<Record<string, unknown>>(db, 'SELECT * FROM auth_codes WHERE id = ?', [tokenHash(p.code)]);
    if (!r) throw new InvalidGrant('The authorization code is invalid.');
    const row: CodeRow = {
      id: String(r.id),
      tenant_id: String(r.tenant_id),
      client_id: String(r.client_id),
      user_id: String(r.user_id),
      session_id: String(r.session_id),
      family_id: String(r.family_id),
      redirect_uri: String(r.redirect_uri),
      scope: String(r.scope).split(' ').filter(Boolean),
      nonce: (r.nonce as string) ?? null,
      code_challenge: String(r.code_challenge),
      auth_time: num(r.auth_time),
      acr: String(r.acr),
      amr: json<string[]>(r.amr),
      expires_at: num(r.expires_at),
      consumed_at: r.consumed_at === null ? null : num(r.consumed_at),
    };
    if (row.client_id !== p.clientId) throw new InvalidGrant('The authorization code was issued to another client.');
    if (row.consumed_at !== null)
      throw new ReuseDetected(
        row.family_id,
        'code_replay',
        'The authorization code was already used; tokens issued from it are revoked.',
      );
    if (row.expires_at <= Date.now()) throw new InvalidGrant('The authorization code has expired.');
    if (p.redirectUri !== row.redirect_uri)
      throw new InvalidGrant('redirect_uri does not match the authorization request.');
    if (!p.codeVerifier || !verifyS256(p.codeVerifier, row.code_challenge))
      throw new InvalidGrant('The PKCE code_verifier does not match the code_challenge.');
    const won = await exec(db, 'UPDATE auth_codes SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL', [
      Date.now(),
      row.id,
    ]);
    if (won !== 1)
      throw new ReuseDetected(
        row.family_id,
        'code_replay',
        'The authorization code was already used; tokens issued from it are revoked.',
      );
    return row;
  }

  // ---- token families and refresh tokens ----

  async createFamily(
    db: Db,
    f: {
      id: string;
      tenantId: string;
      userId: string | null;
      clientId: string;
      sessionId: string | null;
      consentId: string | null;
      scope: string[];
    },
  ): Promise<void> {
    await exec(
      db,
      'INSERT INTO token_families (id, tenant_id, user_id, client_id, session_id, consent_id, scope, created_at, revoked_at, revoked_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)',
      [f.id, f.tenantId, f.userId, f.clientId, f.sessionId, f.consentId, f.scope.join(' '), Date.now()],
    );
  }

  async getFamily(db: Db, id: string): Promise<FamilyRow | undefined> {
    const r = await one<Record<string, unknown>>(db, 'SELECT * FROM token_families WHERE id = ?', [id]);
    if (!r) return undefined;
    return {
      id: String(r.id),
      tenant_id: String(r.tenant_id),
      user_id: (r.user_id as string) ?? null,
      client_id: String(r.client_id),
      session_id: (r.session_id as string) ?? null,
      consent_id: (r.consent_id as string) ?? null,
      scope: String(r.scope).split(' ').filter(Boolean),
      revoked_at: r.revoked_at === null ? null : num(r.revoked_at),
    };
  }

  async revokeFamily(db: Db, familyId: string, reason: string): Promise<void> {
    await exec(db, 'UPDATE token_families SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL', [
      Date.now(),
      reason,
      familyId,
    ]);
  }

  async issueRefreshToken(db: Db, tenantId: string, familyId: string): Promise<string> {
    const token = randomToken(32);
    const now = Date.now();
    await exec(
      db,
      'INSERT INTO refresh_tokens (id, tenant_id, family_id, created_at, expires_at, consumed_at) VALUES (?, ?, ?, ?, ?, NULL)',
      [tokenHash(token), tenantId, familyId, now, now + REFRESH_TOKEN_TTL_MS],
    );
    return token;
  }

  /**
   * Rotates a refresh token (RFC 9700 §4.14.2): the presented token is consumed and a new one
   * issued. Presenting a consumed token again is reuse: the whole family is revoked.
   */
  async rotateRefreshToken(db: Db, token: string, clientId: string): Promise<FamilyRow> {
    const r = await one<Record<string, unknown>>(
      db,
      'SELECT id, family_id, expires_at, consumed_at FROM refresh_tokens WHERE id = ?',
      [tokenHash(token)],
    );
    if (!r) throw new InvalidGrant('The refresh token is invalid.');
    const family = await this.getFamily(db, String(r.family_id));
    if (!family || family.client_id !== clientId)
      throw new InvalidGrant('The refresh token was issued to another client.');
    if (r.consumed_at !== null)
      throw new ReuseDetected(
        family.id,
        'refresh_reuse',
        'The refresh token was already used; the token family is revoked.',
      );
    if (family.revoked_at !== null) throw new InvalidGrant('The refresh token has been revoked.');
    if (num(r.expires_at) <= Date.now()) throw new InvalidGrant('The refresh token has expired.');
    const won = await exec(db, 'UPDATE refresh_tokens SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL', [
      Date.now(),
      String(r.id),
    ]);
    if (won !== 1)
      throw new ReuseDetected(
        family.id,
        'refresh_reuse',
        'The refresh token was already used; the token family is revoked.',
      );
    return family;
  }

  /** RFC 7009: revoking a refresh token revokes its family; unknown tokens are ignored. */
  async revokeRefreshToken(token: string, clientId: string): Promise<boolean> {
    const r = await one<{ family_id: string }>(this.ds, 'SELECT family_id FROM refresh_tokens WHERE id = ?', [
      tokenHash(token),
    ]);
    if (!r) return false;
    const family = await this.getFamily(this.ds, r.family_id);
    if (!family || family.client_id !== clientId) return false;
    await this.revokeFamily(this.ds, family.id, 'revoked');
    return true;
  }

  async revokeAccessToken(jti: string, tenantId: string, expiresAtMs: number): Promise<void> {
    try {
      await exec(
        this.ds,
        'INSERT INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at) VALUES (?, ?, ?, ?)',
        [jti, tenantId, expiresAtMs, Date.now()],
      );
    } catch {
      // Already revoked: revocation is idempotent.
    }
  }

  /** True when the token's jti or its family has been revoked. */
  async isAccessTokenRevoked(jti: string, familyId: string | undefined): Promise<boolean> {
    const r = await one<{ n: unknown }>(
      this.ds,
      `SELECT (SELECT COUNT(*) FROM revoked_access_tokens WHERE jti = ?) + (SELECT COUNT(*) FROM token_families WHERE id = ? AND revoked_at IS NOT NULL) AS n`,
      [jti, familyId ?? ''],
    );
    return num(r?.n) > 0;
  }

  // ---- consents ----

  /** `db`: the caller's transaction, when it reads the consent inside one. */
  async findConsent(
    tenantId: string,
    userId: string,
    clientId: string,
    db: Db = this.ds,
  ): Promise<ConsentRow | undefined> {
    const r = await one<Record<string, unknown>>(
      db,
      'SELECT * FROM consents WHERE tenant_id = ? AND user_id = ? AND client_id = ? AND revoked_at IS NULL ORDER BY granted_at DESC LIMIT 1',
      [tenantId, userId, clientId],
    );
    if (!r) return undefined;
    const c = toConsent(r);
    return c.expires_at !== null && c.expires_at <= Date.now() ? undefined : c;
  }

  /** Records a grant of `scopes`; an existing consent is widened rather than duplicated. */
  async grantConsent(
    db: Db,
    p: { tenantId: string; userId: string; clientId: string; scopes: string[] },
  ): Promise<ConsentRow> {
    const existing = await this.findConsent(p.tenantId, p.userId, p.clientId, db);
    const now = Date.now();
    if (existing) {
      const scopes = [...new Set([...existing.scopes, ...p.scopes])];
      if (scopes.length !== existing.scopes.length) {
        await exec(db, 'UPDATE consents SET scopes = ?, granted_at = ? WHERE id = ?', [
          JSON.stringify(scopes),
          now,
          existing.id,
        ]);
      }
      return { ...existing, scopes, granted_at: scopes.length !== existing.scopes.length ? now : existing.granted_at };
    }
    const c: ConsentRow = {
      id: newId('cns'),
      tenant_id: p.tenantId,
      user_id: p.userId,
      client_id: p.clientId,
      scopes: [...new Set(p.scopes)],
      granted_at: now,
      expires_at: null,
      privacy_policy_version: null,
      tos_version: null,
      consent_version: CONSENT_VERSION,
    };
    await exec(
      db,
      'INSERT INTO consents (id, tenant_id, user_id, client_id, scopes, granted_at, expires_at, privacy_policy_version, tos_version, consent_version, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?, NULL)',
      [c.id, c.tenant_id, c.user_id, c.client_id, JSON.stringify(c.scopes), now, c.consent_version],
    );
    return c;
  }

  async listConsents(tenantId: string, userId: string): Promise<ConsentRow[]> {
    return (
      await all<Record<string, unknown>>(
        this.ds,
        'SELECT * FROM consents WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL ORDER BY granted_at DESC',
        [tenantId, userId],
      )
    ).map(toConsent);
  }
}

function toConsent(r: Record<string, unknown>): ConsentRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    user_id: String(r.user_id),
    client_id: String(r.client_id),
    scopes: json<string[]>(r.scopes),
    granted_at: num(r.granted_at),
    expires_at: r.expires_at === null ? null : num(r.expires_at),
    privacy_policy_version: (r.privacy_policy_version as string) ?? null,
    tos_version: (r.tos_version as string) ?? null,
    consent_version: num(r.consent_version),
  };
}
