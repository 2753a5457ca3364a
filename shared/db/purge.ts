/**
 * Chunked deletes for the housekeeping jobs (called by the repositories that own each table):
 * select a page of primary keys, delete exactly those, repeat. Portable across SQLite (no
 * DELETE … LIMIT) and MySQL (no LIMIT in an IN subquery), and no statement holds locks for long.
 */
import type { Db } from './index.js';
import { retryTransient } from './retry.js';
import { all, exec } from './sql.js';

const CHUNK = 1000;
/** Per run and table; a larger backlog continues at the next run. */
const MAX_CHUNKS = 200;

export async function deleteInChunks(
  ds: Db,
  p: { table: string; key: string; where: string; params: unknown[]; signal?: AbortSignal },
): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < MAX_CHUNKS && !p.signal?.aborted; i++) {
    const ids = (
      await all<Record<string, string>>(ds, `SELECT ${p.key} AS k FROM ${p.table} WHERE ${p.where} LIMIT ?`, [
        ...p.params,
        CHUNK,
      ])
    ).map((r) => r.k);
    if (!ids.length) break;
    deleted += await retryTransient(
      () =>
        exec(ds, `DELETE FROM ${p.table} WHERE ${p.where} AND ${p.key} IN (${ids.map(() => '?').join(', ')})`, [
          ...p.params,
          ...ids,
        ]),
      10_000,
    );
    if (ids.length < CHUNK) break;
  }
  return deleted;
}
