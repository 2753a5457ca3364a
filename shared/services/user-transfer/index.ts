/**
 * Users in bulk: import (a file streamed in batches, or one batch of the admin API) and export
 * (docs/directory.md, "Users: import and export"). The CLI and the API call this one service,
 * so both read, check and write records the same way.
 */
import type { Readable } from 'node:stream';
import type { Database } from '../../db/index.js';
import { notFound } from '../../errors.js';
import { TenantRepository } from '../../repositories/index.js';
import type { CustomClaimsService } from '../custom-claims.js';
import { exportUsers } from './export.js';
import {
  countInto,
  emptyCounts,
  STREAM_BATCH,
  UserImporter,
  type ImportCounts,
  type ImportOptions,
  type RecordResult,
} from './import.js';
import { readRecords } from './read.js';
import { readObject, type ImportFormat, type ReadRecord } from './records.js';

export { IMPORT_FORMATS, type ImportFormat } from './records.js';
export type { ImportCounts, RecordResult } from './import.js';

/** Records in one POST …/users/import: a batch is one transaction, kept short. */
export const MAX_IMPORT_BATCH = 1000;

export class UserTransferService {
  private readonly importer: UserImporter;
  constructor(
    private readonly ds: Database,
    claims: CustomClaimsService,
  ) {
    this.importer = new UserImporter(ds, claims);
  }

  private async requireTenant(tenantId: string): Promise<void> {
    if (!(await new TenantRepository(this.ds).get(tenantId))) throw notFound(`Tenant ${tenantId}`);
  }

  /** POST …/users/import: one batch in one transaction, a result per record (`position` its index). */
  async importBatch(
    tenantId: string,
    users: unknown[],
    opts: ImportOptions,
  ): Promise<ImportCounts & { results: RecordResult[] }> {
    await this.requireTenant(tenantId);
    await this.importer.prepare(tenantId);
    const items = users.map((u, i) => readObject(i, u));
    const results = await this.importer.batch(tenantId, items, opts);
    return { ...countInto(emptyCounts(), results), results };
  }

  /**
   * `iam users import`: reads `input` record by record and applies it in batches of
   * STREAM_BATCH, each in its own transaction; `onBatch` sees each batch's results (progress,
   * the refused lines). Memory holds one batch, whatever the file's length.
   */
  async importStream(
    tenantId: string,
    input: Readable,
    format: ImportFormat,
    opts: ImportOptions & { onBatch?: (results: RecordResult[]) => void },
  ): Promise<ImportCounts> {
    await this.requireTenant(tenantId);
    await this.importer.prepare(tenantId);
    const counts = emptyCounts();
    let batch: ReadRecord[] = [];
    const flush = async () => {
      const results = await this.importer.batch(tenantId, batch, opts);
      batch = [];
      countInto(counts, results);
      opts.onBatch?.(results);
    };
    try {
      for await (const r of readRecords(input, format)) {
        batch.push(r);
        if (batch.length >= STREAM_BATCH) await flush();
      }
    } finally {
      // A file that stops framing (an unclosed CSV quote) still gets the records read before it.
      if (batch.length) await flush();
    }
    return counts;
  }

  /** `iam users export`: the tenant's users as text chunks of the format, page by page. */
  async exportUsers(tenantId: string, format: ImportFormat): Promise<AsyncGenerator<string>> {
    await this.requireTenant(tenantId);
    return exportUsers(this.ds, tenantId, format);
  }
}
