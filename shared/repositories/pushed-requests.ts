/**
 * Pushed authorization requests (RFC 9126, docs/par.md): the parameters a client pushed, found
 * by the hash of the `request_uri`'s random part. As for the other one-time artifacts, the row
 * is found before its tenant is known (`PushedRequestLookup` returns its tenant id), and spent
 * through that tenant's scope with a conditional UPDATE: one winner across daemons.
 */
import type { Db } from '../db/index.js';
import { exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';
import { deleteInChunks } from '../db/purge.js';

/** A pushed request as its lookup finds it; `params` as validated at push time. */
export interface PushedRequestRow {
  tenantId: string;
  clientId: string;
  params: unknown;
  expiresAt: number;
  used: boolean;
}

export class ScopedPushedRequests {
  constructor(private readonly s: ScopeRef) {}

  async insert(r: { id: string; clientId: string; params: unknown; createdAt: number; expiresAt: number }) {
    await exec(
      this.s.db,
      `INSERT INTO pushed_auth_requests (id, tenant_id, client_id, params, created_at, expires_at, used_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
      [r.id, this.s.tenantId, r.clientId, JSON.stringify(r.params), r.createdAt, r.expiresAt],
    );
  }

  /**
   * Spends the request for `clientId`: true for the one caller that did, while it is unexpired
   * at `now` and unused (RFC 9126 §4: single use).
   */
  async use(id: string, clientId: string, now: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        `UPDATE pushed_auth_requests SET used_at = ?
          WHERE tenant_id = ? AND id = ? AND client_id = ? AND used_at IS NULL AND expires_at > ?`,
        [now, this.s.tenantId, id, clientId, now],
      )) === 1
    );
  }
}

/** The cross-tenant lookup of a presented `request_uri` (by its hash) and the expiry purge. */
export class PushedRequestLookup {
  constructor(private readonly db: Db) {}

  async byHash(id: string): Promise<PushedRequestRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      'SELECT tenant_id, client_id, params, expires_at, used_at FROM pushed_auth_requests WHERE id = ?',
      [id],
    );
    if (!r) return undefined;
    return {
      tenantId: String(r.tenant_id),
      clientId: String(r.client_id),
      params: json<unknown>(r.params),
      expiresAt: num(r.expires_at),
      used: r.used_at !== null && r.used_at !== undefined,
    };
  }

  /** Pushed requests that expired before `before` (the auth-purge job). */
  purge(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'pushed_auth_requests',
      key: 'id',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }
}
