/**
 * Listing (RFC 7644 §3.4.2): the query's parameters, paging bounds, and the evaluation of a
 * filter over a tenant's rows in keyset-paged batches, so memory stays bounded by one batch
 * plus one page whatever the tenant's size.
 */
import { invalidValue } from './errors.js';
import { parseFilter, matches, type ScimFilter } from './filter.js';
import { parseProjection, type Projection, type ScimResource } from './render.js';
import type { ScimResourceType } from './schema.js';

/**
 * `count` when the client names none (RFC 7644 §3.4.2.4), and its maximum
 * (ServiceProviderConfig filter.maxResults).
 */
export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 200;
/** Rows read per batch when a filter is evaluated by a scan. */
export const SCAN_BATCH = 500;

export interface ListQuery {
  filter?: ScimFilter;
  /** 1-based (§3.4.2.4): a value below 1 is read as 1. */
  startIndex: number;
  /** 0..MAX_COUNT: a negative value is read as 0, a larger one as MAX_COUNT. */
  count: number;
  projection: Projection;
}

const int = (name: string, v: unknown): number | undefined => {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw invalidValue(`${name} must be an integer.`);
  return n;
};

const str = (name: string, v: unknown): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalidValue(`${name} must be given once, as a string.`);
  return v;
};

/**
 * The list parameters of a GET query string or a POST /.search body (§3.4.3), checked:
 * filter (400 invalidFilter), startIndex, count, attributes, excludedAttributes. `sortBy` is
 * not supported (ServiceProviderConfig sort.supported false) and is ignored, as §3.4.2.3 allows.
 */
export function parseListQuery(rt: ScimResourceType, q: Record<string, unknown>): ListQuery {
  const filterText = str('filter', q.filter);
  const start = int('startIndex', q.startIndex) ?? 1;
  const count = int('count', q.count) ?? DEFAULT_COUNT;
  return {
    ...(filterText !== undefined && filterText.trim() !== '' ? { filter: parseFilter(rt, filterText) } : {}),
    startIndex: Math.max(1, start),
    count: Math.min(MAX_COUNT, Math.max(0, count)),
    projection: parseProjection(rt, str('attributes', q.attributes), str('excludedAttributes', q.excludedAttributes)),
  };
}

/** A tenant's rows counted and sliced by their index, for a list without a filter. */
export interface SliceSource<Row> {
  count(): Promise<number>;
  slice(offset: number, limit: number): Promise<Row[]>;
}

/**
 * A list without a filter (what Okta's and Entra ID's imports page through): totalResults is
 * a COUNT and the page one indexed slice, so a page costs the same in a tenant of any size
 * rather than a scan of every row (RFC 7644 §3.4.2.4: 1-based `startIndex`).
 */
export async function slicePage<Row>(
  source: SliceSource<Row>,
  toResource: (row: Row) => ScimResource | Promise<ScimResource>,
  q: Pick<ListQuery, 'startIndex' | 'count'>,
): Promise<{ total: number; page: ScimResource[] }> {
  const total = await source.count();
  const rows = q.count > 0 && q.startIndex <= total ? await source.slice(q.startIndex - 1, q.count) : [];
  const page: ScimResource[] = [];
  for (const row of rows) page.push(await toResource(row));
  return { total, page };
}

/** One batch of a tenant's rows in a stable order, after the cursor; `next` is the cursor of the last row. */
export type BatchSource<Row> = (after: Row | undefined, limit: number) => Promise<Row[]>;

/**
 * Evaluates `filter` over every row `source` yields (batches of SCAN_BATCH in its order),
 * keeping only the page [startIndex, startIndex + count) of the matches, and counting them all
 * (totalResults). Memory: one batch and one page.
 */
export async function scanPage<Row>(
  source: BatchSource<Row>,
  toResource: (row: Row) => ScimResource | Promise<ScimResource>,
  q: Pick<ListQuery, 'filter' | 'startIndex' | 'count'>,
): Promise<{ total: number; page: ScimResource[] }> {
  let total = 0;
  const page: ScimResource[] = [];
  let after: Row | undefined;
  for (;;) {
    const rows = await source(after, SCAN_BATCH);
    for (const row of rows) {
      const r = await toResource(row);
      if (q.filter && !matches(q.filter, r)) continue;
      total++;
      if (total >= q.startIndex && page.length < q.count) page.push(r);
    }
    if (rows.length < SCAN_BATCH) break;
    after = rows[rows.length - 1];
  }
  return { total, page };
}
