/**
 * The entity inventories of federation trust sources (migration 0021): the live generation
 * per source and its entities. Every statement is bound to the scope's tenant.
 */
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

export interface InventoryRow {
  trust_source_id: string;
  active_generation: number;
  /** Epoch milliseconds, or null when the copy named none. */
  valid_until: number | null;
  cache_duration_seconds: number | null;
  entity_count: number;
  signing_fingerprint: string;
  content_hash: string;
  fetched_at: number;
}

export interface EntityRow {
  entity_hash: string;
  entity_id: string;
  roles: string[];
  registration_authority: string | null;
  entity_categories: string[];
  entity_category_support: string[];
  hide_from_discovery: boolean;
  sirtfi: boolean;
}

/** An entity of the live copy of one source, with what resolution needs of the copy. */
export interface LiveEntityRow extends EntityRow {
  trust_source_id: string;
  valid_until: number | null;
}

const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const toInventory = (r: Row): InventoryRow => ({
  trust_source_id: String(r.trust_source_id),
  active_generation: num(r.active_generation),
  valid_until: n(r.valid_until),
  cache_duration_seconds: n(r.cache_duration_seconds),
  entity_count: num(r.entity_count),
  signing_fingerprint: String(r.signing_fingerprint),
  content_hash: String(r.content_hash),
  fetched_at: num(r.fetched_at),
});

const toEntity = (r: Row): EntityRow => ({
  entity_hash: String(r.entity_hash),
  entity_id: String(r.entity_id),
  roles: String(r.roles).split(',').filter(Boolean),
  registration_authority: typeof r.registration_authority === 'string' ? r.registration_authority : null,
  entity_categories: json<string[]>(r.entity_categories),
  entity_category_support: json<string[]>(r.entity_category_support),
  hide_from_discovery: Number(r.hide_from_discovery) === 1,
  sirtfi: Number(r.sirtfi) === 1,
});

const ENTITY_COLS = [
  'entity_hash',
  'entity_id',
  'roles',
  'registration_authority',
  'entity_categories',
  'entity_category_support',
  'hide_from_discovery',
  'sirtfi',
].join(', ');

/** Rows per INSERT: fixed, so SQLite prepares two statements (a batch, a single row), not one per size. */
export const ENTITY_BATCH = 100;
const batchSql = (rows: number) =>
  `INSERT INTO federation_entities (tenant_id, trust_source_id, generation, ${ENTITY_COLS}) VALUES ${new Array(rows)
    .fill('(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
    .join(', ')}`;
const BATCH_SQL = batchSql(ENTITY_BATCH);
const ONE_SQL = batchSql(1);

export class ScopedFederationEntities {
  constructor(private readonly sc: ScopeRef) {}

  async inventory(sourceId: string): Promise<InventoryRow | undefined> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT trust_source_id, active_generation, valid_until, cache_duration_seconds, entity_count,
              signing_fingerprint, content_hash, fetched_at
         FROM federation_inventories WHERE tenant_id = ? AND trust_source_id = ?`,
      [this.sc.tenantId, sourceId],
    );
    return r ? toInventory(r) : undefined;
  }

  /** Removes rows of every generation but `keep` (a crashed write's leftovers, or the old copy). */
  async deleteOtherGenerations(sourceId: string, keep: number, limit: number): Promise<number> {
    // A bounded delete per call keeps each statement (and SQLite's gate) short.
    return exec(
      this.sc.db,
      // The derived table with LIMIT is materialised, which MySQL needs to delete from the
      // table it selects from.
      `DELETE FROM federation_entities WHERE tenant_id = ? AND trust_source_id = ? AND generation <> ?
          AND entity_hash IN (SELECT entity_hash FROM (SELECT entity_hash FROM federation_entities
                WHERE tenant_id = ? AND trust_source_id = ? AND generation <> ? LIMIT ?) h)`,
      [this.sc.tenantId, sourceId, keep, this.sc.tenantId, sourceId, keep, limit],
    );
  }

  /** Inserts entities of a (not yet live) generation, in fixed-size batches. */
  async insertEntities(sourceId: string, generation: number, rows: EntityRow[]): Promise<void> {
    const bind = (e: EntityRow) => [
      this.sc.tenantId,
      sourceId,
      generation,
      e.entity_hash,
      e.entity_id,
      e.roles.join(','),
      e.registration_authority,
      JSON.stringify(e.entity_categories),
      JSON.stringify(e.entity_category_support),
      e.hide_from_discovery ? 1 : 0,
      e.sirtfi ? 1 : 0,
    ];
    let i = 0;
    for (; i + ENTITY_BATCH <= rows.length; i += ENTITY_BATCH)
      await exec(this.sc.db, BATCH_SQL, rows.slice(i, i + ENTITY_BATCH).flatMap(bind));
    for (; i < rows.length; i++) await exec(this.sc.db, ONE_SQL, bind(rows[i]));
  }

  /** Makes `inv` (its generation already written) the live copy of the source. */
  async putInventory(inv: InventoryRow): Promise<void> {
    const changed = await exec(
      this.sc.db,
      `UPDATE federation_inventories SET active_generation = ?, valid_until = ?, cache_duration_seconds = ?,
              entity_count = ?, signing_fingerprint = ?, content_hash = ?, fetched_at = ?
        WHERE tenant_id = ? AND trust_source_id = ?`,
      [
        inv.active_generation,
        inv.valid_until,
        inv.cache_duration_seconds,
        inv.entity_count,
        inv.signing_fingerprint,
        inv.content_hash,
        inv.fetched_at,
        this.sc.tenantId,
        inv.trust_source_id,
      ],
    );
    if (changed === 0)
      await exec(
        this.sc.db,
        `INSERT INTO federation_inventories (tenant_id, trust_source_id, active_generation, valid_until,
           cache_duration_seconds, entity_count, signing_fingerprint, content_hash, fetched_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          this.sc.tenantId,
          inv.trust_source_id,
          inv.active_generation,
          inv.valid_until,
          inv.cache_duration_seconds,
          inv.entity_count,
          inv.signing_fingerprint,
          inv.content_hash,
          inv.fetched_at,
        ],
      );
  }

  /** Records that a re-fetched copy (304 or the same content) is still the live one. */
  async touchInventory(sourceId: string, fetchedAt: number): Promise<void> {
    await exec(
      this.sc.db,
      'UPDATE federation_inventories SET fetched_at = ? WHERE tenant_id = ? AND trust_source_id = ?',
      [fetchedAt, this.sc.tenantId, sourceId],
    );
  }

  /** Highest generation number present for the source (live or a leftover), or 0. */
  async maxGeneration(sourceId: string): Promise<number> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT MAX(generation) AS g FROM federation_entities WHERE tenant_id = ? AND trust_source_id = ?`,
      [this.sc.tenantId, sourceId],
    );
    return Number(r?.g ?? 0);
  }

  /** The live entity of every source of the tenant that lists `entityHash`. */
  async liveByHash(entityHash: string): Promise<LiveEntityRow[]> {
    const rows = await all<Row>(
      this.sc.db,
      `SELECT e.trust_source_id, i.valid_until, ${ENTITY_COLS.split(', ')
        .map((c) => `e.${c}`)
        .join(', ')}
         FROM federation_entities e
         JOIN federation_inventories i ON i.tenant_id = e.tenant_id AND i.trust_source_id = e.trust_source_id
                                     AND i.active_generation = e.generation
        WHERE e.tenant_id = ? AND e.entity_hash = ?`,
      [this.sc.tenantId, entityHash],
    );
    return rows.map((r) => ({
      ...toEntity(r),
      trust_source_id: String(r.trust_source_id),
      valid_until: n(r.valid_until),
    }));
  }

  /** A page of the live entities of one source, ordered by entityID hash. */
  async listLive(sourceId: string, limit: number, offset: number): Promise<EntityRow[]> {
    const rows = await all<Row>(
      this.sc.db,
      `SELECT ${ENTITY_COLS.split(', ')
        .map((c) => `e.${c}`)
        .join(', ')}
         FROM federation_entities e
         JOIN federation_inventories i ON i.tenant_id = e.tenant_id AND i.trust_source_id = e.trust_source_id
                                     AND i.active_generation = e.generation
        WHERE e.tenant_id = ? AND e.trust_source_id = ? ORDER BY e.entity_hash LIMIT ? OFFSET ?`,
      [this.sc.tenantId, sourceId, limit, offset],
    );
    return rows.map(toEntity);
  }
}
