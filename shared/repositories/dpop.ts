/**
 * The DPoP proofs already seen (RFC 9449 §11.1, docs/dpop.md), in `dpop_proofs`: one row per
 * proof, keyed by a hash of the proof key's thumbprint and its `jti`, kept until the proof could
 * no longer be accepted. Every daemon on the database shares it, so a proof replayed at another
 * daemon is refused too.
 *
 * Platform-level rows, like `rate_limits`: a proof's key and `jti` are the key holder's, no
 * tenant reads the rows, and one key space for every tenant is the stricter rule.
 */
import type { DataSource } from 'typeorm';
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import { exec } from '../db/sql.js';

const dataSourceOf = (db: Db): DataSource => ('manager' in db ? db : db.connection);

export class DpopProofs {
  constructor(private readonly db: Db) {}

  /**
   * Records a proof seen until `expiresAt` (ms). False when it was already recorded: a replay.
   * One winner under races: the key is the primary key, the insert ignores a duplicate and the
   * affected rows tell which caller wrote it.
   */
  async record(key: string, expiresAt: number): Promise<boolean> {
    const type = dataSourceOf(this.db).options.type;
    const ignore = type === 'mysql' || type === 'mariadb' ? 'INSERT IGNORE' : 'INSERT OR IGNORE';
    return (await exec(this.db, `${ignore} INTO dpop_proofs (id, expires_at) VALUES (?, ?)`, [key, expiresAt])) === 1;
  }
}

/** The auth-purge job's part: proofs that can no longer be replayed (shared/services/auth/purge.ts). */
export class DpopProofHousekeeping {
  constructor(private readonly db: Db) {}

  expired(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'dpop_proofs',
      key: 'id',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }
}
