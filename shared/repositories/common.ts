/** Small pieces every repository file uses. */
import type { EntityManager } from 'typeorm';
import type { Db } from '../db/index.js';

/** The entity manager of a data source or of an open transaction. */
export const manager = (db: Db): EntityManager => ('manager' in db ? db.manager : db);

/** Offset paging for admin lists. */
export interface Page {
  limit?: number;
  offset?: number;
}

/** 1 to 1000 rows, 100 when the caller names no limit. */
export const clampLimit = (n: number | undefined): number => Math.min(Math.max(n ?? 100, 1), 1000);

/**
 * What a scoped repository is built from: the database (or a transaction) and the one tenant
 * every statement it runs is bound to. Only TenantScope makes these (scope.ts).
 */
export interface ScopeRef {
  readonly db: Db;
  readonly tenantId: string;
}
