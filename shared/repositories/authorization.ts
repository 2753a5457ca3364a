/**
 * The authorization side of the sign-in's rows: authorization requests (the "authorization
 * challenge" a login continues, consumed once the login or consent answers it) and
 * authorization codes (RFC 6749 §4.1.2). Apart from sessions.ts because these are the
 * protocol's rows, read by the authorization and token endpoints, where sessions.ts holds the
 * login's own (codes, sessions, artifacts).
 *
 * As there, a row found by the hash of a value only its holder knows is found through
 * lookups.ts, which returns its tenant id; consuming it then goes through that tenant's scope
 * here, every statement binds `tenant_id`, and a one-winner race is a conditional update.
 */
import { exec, json, num } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

/** An authorization request as its lookup finds it (lookups.ts); `params` as saved. */
export interface AuthRequestRow {
  tenantId: string;
  params: unknown;
  expiresAt: number;
  consumed: boolean;
}

/** Maps the authorization request lookup's row (lookups.ts). */
export function toAuthRequestRow(r: Row): AuthRequestRow {
  return {
    tenantId: String(r.tenant_id),
    params: json<unknown>(r.params),
    expiresAt: num(r.expires_at),
    consumed: r.consumed_at !== null && r.consumed_at !== undefined,
  };
}

/** Authorization requests: saved when a login or consent page is shown, consumed once answered. */
export class ScopedAuthRequests {
  constructor(private readonly s: ScopeRef) {}

  async insert(r: { id: string; clientId: string; params: unknown; createdAt: number; expiresAt: number }) {
    await exec(
      this.s.db,
      `INSERT INTO auth_requests (id, tenant_id, client_id, params, created_at, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
      [r.id, this.s.tenantId, r.clientId, JSON.stringify(r.params), r.createdAt, r.expiresAt],
    );
  }

  /** One winner: true for the one caller that consumed it. */
  async consume(id: string, now: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        'UPDATE auth_requests SET consumed_at = ? WHERE tenant_id = ? AND id = ? AND consumed_at IS NULL',
        [now, this.s.tenantId, id],
      )) === 1
    );
  }
}

/** An authorization code as its lookup finds it (lookups.ts); `id` is its hash. */
export interface AuthCodeRow {
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
  /** The resource indicators (RFC 8707) of the authorization request; null for none. */
  resource: string[] | null;
  /** RFC 9449 §10: the `dpop_jkt` of the authorization request; null for none. */
  dpop_jkt: string | null;
  expires_at: number;
  consumed_at: number | null;
}

/** Maps the authorization code lookup's row (lookups.ts). */
export function toAuthCodeRow(r: Row): AuthCodeRow {
  return {
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
    resource: r.resource === null || r.resource === undefined ? null : json<string[]>(r.resource),
    dpop_jkt: typeof r.dpop_jkt === 'string' ? r.dpop_jkt : null,
    expires_at: num(r.expires_at),
    consumed_at: r.consumed_at === null ? null : num(r.consumed_at),
  };
}

/** Authorization codes (RFC 6749 §4.1.2): single-use, a minute long. */
export class ScopedAuthCodes {
  constructor(private readonly s: ScopeRef) {}

  async insert(c: Omit<AuthCodeRow, 'tenant_id' | 'consumed_at'> & { created_at: number }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO auth_codes (id, tenant_id, client_id, user_id, session_id, family_id, redirect_uri, scope, nonce,
         code_challenge, auth_time, acr, amr, resource, dpop_jkt, created_at, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      [
        c.id,
        this.s.tenantId,
        c.client_id,
        c.user_id,
        c.session_id,
        c.family_id,
        c.redirect_uri,
        c.scope.join(' '),
        c.nonce,
        c.code_challenge,
        c.auth_time,
        c.acr,
        JSON.stringify(c.amr),
        c.resource?.length ? JSON.stringify(c.resource) : null,
        c.dpop_jkt ?? null,
        c.created_at,
        c.expires_at,
      ],
    );
  }

  /** One winner: true for the one redemption that consumed it. */
  async consume(id: string, now: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        'UPDATE auth_codes SET consumed_at = ? WHERE tenant_id = ? AND id = ? AND consumed_at IS NULL',
        [now, this.s.tenantId, id],
      )) === 1
    );
  }
}
