/**
 * Passkeys, their tombstones and WebAuthn challenges (migrations 0024 and 0027,
 * docs/passkeys.md). All are tenant-owned: every statement binds `tenant_id`. A credential is
 * found by the SHA-256 of its id within the tenant (the unique key), never by the long id
 * itself.
 *
 * One-winner races are conditional updates whose affected-row count the caller checks: a
 * challenge is consumed once (and only while live), and the signature counter moves only from
 * the value the verifier read.
 */
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

/** A stored passkey. `publicKey` is the base64url COSE key; never shown to anyone. */
export interface PasskeyRow {
  id: string;
  userId: string;
  credentialId: string;
  credentialHash: string;
  userHandle: string;
  publicKey: string;
  counter: number;
  transports: string[];
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  aaguid: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

const COLUMNS =
  'id, user_id, credential_id, credential_hash, user_handle, public_key, counter, transports, device_type, ' +
  'backed_up, aaguid, name, created_at, last_used_at';

function toPasskeyRow(r: Row): PasskeyRow {
  return {
    id: String(r.id),
    userId: String(r.user_id),
    credentialId: String(r.credential_id),
    credentialHash: String(r.credential_hash),
    userHandle: String(r.user_handle),
    publicKey: String(r.public_key),
    counter: num(r.counter),
    transports: json<string[]>(r.transports),
    deviceType: r.device_type === 'multiDevice' ? 'multiDevice' : 'singleDevice',
    backedUp: num(r.backed_up) === 1,
    aaguid: String(r.aaguid),
    name: String(r.name),
    createdAt: num(r.created_at),
    lastUsedAt: r.last_used_at === null || r.last_used_at === undefined ? null : num(r.last_used_at),
  };
}

/** The tenant's passkeys. */
export class ScopedPasskeys {
  constructor(private readonly s: ScopeRef) {}

  async insert(p: PasskeyRow): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO passkeys (id, tenant_id, user_id, credential_id, credential_hash, user_handle, public_key, counter,
         transports, device_type, backed_up, aaguid, name, created_at, last_used_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        p.id,
        this.s.tenantId,
        p.userId,
        p.credentialId,
        p.credentialHash,
        p.userHandle,
        p.publicKey,
        p.counter,
        JSON.stringify(p.transports),
        p.deviceType,
        p.backedUp ? 1 : 0,
        p.aaguid,
        p.name,
        p.createdAt,
        p.lastUsedAt,
      ],
    );
  }

  /** The passkey whose credential id hashes to `hash`. */
  async byCredentialHash(hash: string): Promise<PasskeyRow | undefined> {
    const r = await one<Row>(this.s.db, `SELECT ${COLUMNS} FROM passkeys WHERE tenant_id = ? AND credential_hash = ?`, [
      this.s.tenantId,
      hash,
    ]);
    return r ? toPasskeyRow(r) : undefined;
  }

  /** A user's passkeys, newest first. */
  async listByUser(userId: string): Promise<PasskeyRow[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT ${COLUMNS} FROM passkeys WHERE tenant_id = ? AND user_id = ? ORDER BY created_at DESC, id ASC`,
      [this.s.tenantId, userId],
    );
    return rows.map(toPasskeyRow);
  }

  /** One of the user's passkeys, by row id. */
  async get(userId: string, id: string): Promise<PasskeyRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      `SELECT ${COLUMNS} FROM passkeys WHERE tenant_id = ? AND user_id = ? AND id = ?`,
      [this.s.tenantId, userId, id],
    );
    return r ? toPasskeyRow(r) : undefined;
  }

  /** Whether the passkey (by row id) exists. */
  async exists(id: string): Promise<boolean> {
    const r = await one<Row>(this.s.db, 'SELECT id FROM passkeys WHERE tenant_id = ? AND id = ?', [
      this.s.tenantId,
      id,
    ]);
    return !!r;
  }

  /** Renames one of the user's passkeys; false when it is not theirs. */
  async rename(userId: string, id: string, name: string): Promise<boolean> {
    return (
      (await exec(this.s.db, 'UPDATE passkeys SET name = ? WHERE tenant_id = ? AND user_id = ? AND id = ?', [
        name,
        this.s.tenantId,
        userId,
        id,
      ])) === 1
    );
  }

  /** Removes one of the user's passkeys; false when it is not theirs. */
  async remove(userId: string, id: string): Promise<boolean> {
    return (
      (await exec(this.s.db, 'DELETE FROM passkeys WHERE tenant_id = ? AND user_id = ? AND id = ?', [
        this.s.tenantId,
        userId,
        id,
      ])) === 1
    );
  }

  /**
   * Records a use: the new counter, the backup state and the time, only if the counter is still
   * `expected` (WebAuthn §6.1.1). False when a concurrent assertion moved it first (or the
   * passkey was removed meanwhile).
   */
  async recordUse(id: string, expected: number, p: { counter: number; backedUp: boolean; now: number }) {
    return (
      (await exec(
        this.s.db,
        `UPDATE passkeys SET counter = ?, backed_up = ?, last_used_at = ?
          WHERE tenant_id = ? AND id = ? AND counter = ?`,
        [p.counter, p.backedUp ? 1 : 0, p.now, this.s.tenantId, id, expected],
      )) === 1
    );
  }
}

/** The record that the tenant removed a passkey, kept until `expiresAt`. */
export interface PasskeyTombstoneRow {
  passkeyId: string;
  credentialHash: string;
  removedAt: number;
  expiresAt: number;
}

/**
 * The tenant's tombstones of removed passkeys: the only credentials for which the
 * unknown-credential signal is sent (docs/passkeys.md). A lookup counts a tombstone only while
 * it is live (`expires_at > now`), whether or not the purge has deleted it yet.
 */
export class ScopedPasskeyTombstones {
  constructor(private readonly s: ScopeRef) {}

  /**
   * Records a removal. A credential removed before (then registered again) keeps only this,
   * its latest removal: the earlier tombstone is replaced.
   */
  async record(t: PasskeyTombstoneRow): Promise<void> {
    await exec(this.s.db, 'DELETE FROM passkey_tombstones WHERE tenant_id = ? AND credential_hash = ?', [
      this.s.tenantId,
      t.credentialHash,
    ]);
    await exec(
      this.s.db,
      `INSERT INTO passkey_tombstones (passkey_id, tenant_id, credential_hash, removed_at, expires_at)
       VALUES (?, ?, ?, ?, ?)`,
      [t.passkeyId, this.s.tenantId, t.credentialHash, t.removedAt, t.expiresAt],
    );
  }

  /** Whether the credential whose id hashes to `hash` was removed here and its tombstone is live. */
  async liveForCredential(hash: string, now: number): Promise<boolean> {
    const r = await one<Row>(
      this.s.db,
      'SELECT passkey_id FROM passkey_tombstones WHERE tenant_id = ? AND credential_hash = ? AND expires_at > ?',
      [this.s.tenantId, hash, now],
    );
    return !!r;
  }

  /** Whether the passkey (by its former row id) was removed here and its tombstone is live. */
  async liveForPasskey(passkeyId: string, now: number): Promise<boolean> {
    const r = await one<Row>(
      this.s.db,
      'SELECT passkey_id FROM passkey_tombstones WHERE tenant_id = ? AND passkey_id = ? AND expires_at > ?',
      [this.s.tenantId, passkeyId, now],
    );
    return !!r;
  }
}

/** Deletes expired passkey tombstones of every tenant (the auth-purge job). */
export class PasskeyTombstoneHousekeeping {
  constructor(private readonly db: Db) {}

  expired(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'passkey_tombstones',
      key: 'passkey_id',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }
}

/** A stored challenge, as the verifier reads it. */
export interface WebauthnChallengeRow {
  id: string;
  purpose: 'registration' | 'authentication';
  challenge: string;
  userId: string | null;
  sessionId: string | null;
  clientId: string | null;
  authRequestId: string | null;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

/** The tenant's WebAuthn challenges. */
export class ScopedWebauthnChallenges {
  constructor(private readonly s: ScopeRef) {}

  async insert(c: Omit<WebauthnChallengeRow, 'consumedAt'>): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO webauthn_challenges (id, tenant_id, purpose, challenge, user_id, session_id, client_id,
         auth_request_id, created_at, expires_at, consumed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      [
        c.id,
        this.s.tenantId,
        c.purpose,
        c.challenge,
        c.userId,
        c.sessionId,
        c.clientId,
        c.authRequestId,
        c.createdAt,
        c.expiresAt,
      ],
    );
  }

  async find(id: string): Promise<WebauthnChallengeRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      `SELECT id, purpose, challenge, user_id, session_id, client_id, auth_request_id, created_at, expires_at,
              consumed_at FROM webauthn_challenges WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    if (!r) return undefined;
    return {
      id: String(r.id),
      purpose: r.purpose === 'registration' ? 'registration' : 'authentication',
      challenge: String(r.challenge),
      userId: (r.user_id as string | null) ?? null,
      sessionId: (r.session_id as string | null) ?? null,
      clientId: (r.client_id as string | null) ?? null,
      authRequestId: (r.auth_request_id as string | null) ?? null,
      createdAt: num(r.created_at),
      expiresAt: num(r.expires_at),
      consumedAt: r.consumed_at === null || r.consumed_at === undefined ? null : num(r.consumed_at),
    };
  }

  /** One winner: true for the one caller that consumed the live (unexpired, unused) challenge. */
  async consume(id: string, purpose: 'registration' | 'authentication', now: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        `UPDATE webauthn_challenges SET consumed_at = ?
          WHERE tenant_id = ? AND id = ? AND purpose = ? AND consumed_at IS NULL AND expires_at > ?`,
        [now, this.s.tenantId, id, purpose, now],
      )) === 1
    );
  }
}

/** Deletes expired challenges of every tenant (the auth-purge job). */
export class WebauthnChallengeHousekeeping {
  constructor(private readonly db: Db) {}

  expired(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'webauthn_challenges',
      key: 'id',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }
}
