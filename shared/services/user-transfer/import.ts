/**
 * The directory's import (docs/directory.md, "Users: import and export"): records applied in
 * batches, each batch in ONE transaction with its audit event, so a record (the user, its
 * claim values, its upstream link) is written whole or not at all, and an interrupted import
 * leaves whole records only. A record the rules refuse is reported and skipped; it never
 * aborts the batch, because every check runs before the record's first write.
 *
 * Idempotent by email: a record whose address exists updates the fields it gives (name,
 * email_verified, the claims it names, a link it adds) or is reported unchanged; it never
 * creates a second user. So re-running an import, whole or after a crash, converges on the file.
 */
import { newId } from '../../crypto.js';
import { isUniqueViolation, type Database } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import { TenantScope, type CustomClaimSchemaRow, type UpstreamIdpRow } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import type { CustomClaimsService } from '../custom-claims.js';
import { cellValue, type ReadRecord } from './records.js';

export type RecordOutcome = 'created' | 'updated' | 'unchanged' | 'rejected';

export interface RecordResult {
  /** The record's line (a file) or index (a batch of the API). */
  position: number;
  email?: string;
  result: RecordOutcome;
  user_id?: string;
  /** Why it was refused (rejected only). */
  reason?: string;
  /** The fields written: name, email_verified, claims, upstream. */
  changed?: string[];
}

export interface ImportCounts {
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
}

export interface ImportOptions {
  actor: Actor;
  /** Report what would change and write nothing (each batch's writes are rolled back). */
  dryRun?: boolean;
}

/** Records per transaction when streaming a file: small enough that a lock is held briefly. */
export const STREAM_BATCH = 200;

/** Thrown to roll a dry run's batch back, carrying what it would have done. */
class DryRun extends Error {
  constructor(readonly results: RecordResult[]) {
    super('dry run');
  }
}

export const emptyCounts = (): ImportCounts => ({ created: 0, updated: 0, unchanged: 0, rejected: 0 });

export function countInto(counts: ImportCounts, results: RecordResult[]): ImportCounts {
  for (const r of results) counts[r.result] += 1;
  return counts;
}

interface Rules {
  schemas: Map<string, CustomClaimSchemaRow>;
  providers: UpstreamIdpRow[];
}

export class UserImporter {
  constructor(
    private readonly ds: Database,
    private readonly claims: CustomClaimsService,
  ) {}

  /** Before the first batch: the tenant's system claim schemas exist, so a record naming one is told so. */
  prepare(tenantId: string): Promise<void> {
    return this.claims.ensureSystemSchemas(tenantId);
  }

  /**
   * Applies one batch in one transaction. If the transaction fails (a concurrent writer took an
   * address or a subject between a record's check and its write), each record is retried in a
   * transaction of its own, so only the record that conflicts is refused.
   */
  async batch(tenantId: string, items: ReadRecord[], opts: ImportOptions): Promise<RecordResult[]> {
    try {
      return await this.inTransaction(tenantId, items, opts);
    } catch (e) {
      if (e instanceof DryRun) return e.results;
      if (items.length > 1) {
        const out: RecordResult[] = [];
        for (const item of items) out.push(...(await this.batch(tenantId, [item], opts)));
        return out;
      }
      if (!isUniqueViolation(e)) throw e;
      return [
        refused(
          items[0],
          'its address or upstream subject was written meanwhile by another writer; run the import again',
        ),
      ];
    }
  }

  private inTransaction(tenantId: string, items: ReadRecord[], opts: ImportOptions): Promise<RecordResult[]> {
    return this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const rules: Rules = {
        schemas: new Map((await scope.customClaims.listSchemas()).map((s) => [s.field_key, s])),
        providers: await scope.upstreamIdps.list(),
      };
      const results: RecordResult[] = [];
      for (const item of items) results.push(await this.apply(scope, rules, item));
      if (opts.dryRun) throw new DryRun(results);
      // One event per batch, in its transaction, naming each user written and the fields (not
      // the values: they are personal data). One per record cost a third of an import's time.
      const written = results.filter((r) => r.result === 'created' || r.result === 'updated');
      if (written.length)
        await audit(tx, opts.actor, {
          tenantId,
          action: 'user.import',
          targetType: 'tenant',
          targetId: tenantId,
          summary: { users: written.map((r) => ({ id: r.user_id, outcome: r.result, fields: r.changed })) },
        });
      return results;
    });
  }

  private async apply(scope: TenantScope, rules: Rules, item: ReadRecord): Promise<RecordResult> {
    const r = item.record;
    if (!r) return refused(item, item.error ?? 'unreadable');
    try {
      const claims = item.cells
        ? Object.fromEntries(Object.entries(item.cells).map(([k, v]) => [k, cellValue(rules.schemas.get(k), v)]))
        : (r.claims ?? {});
      const existing = await scope.userTransfer.byEmail(r.email);
      const values = this.claims.importValues(rules.schemas, claims, !existing);

      let provider: UpstreamIdpRow | undefined;
      let linked = false;
      if (r.upstream) {
        const { issuer, subject } = r.upstream;
        const matches = rules.providers.filter((p) => p.issuer === issuer);
        if (matches.length !== 1) {
          const what = matches.length
            ? 'the issuer of several upstream identity providers'
            : 'not the issuer of an upstream identity provider';
          return refused(item, `upstream.issuer: ${JSON.stringify(issuer)} is ${what} of this tenant`);
        }
        provider = matches[0];
        const link = await scope.upstreamLinks.findBySubject(provider.id, subject);
        if (link && link.user_id !== existing?.id)
          return refused(item, 'upstream.subject: this upstream subject is linked to another user of this tenant');
        linked = link !== undefined;
      }

      const now = Date.now();
      const addLink = async (userId: string) => {
        if (!provider || linked) return;
        const iss = provider.issuer;
        const sub = r.upstream!.subject;
        await scope.userTransfer.insertLink(
          { id: newId('uil'), provider_id: provider.id, user_id: userId, iss, sub },
          now,
        );
      };
      if (!existing) {
        const id = newId('usr');
        // Not verified unless the record says so: the import did not prove the address.
        const verified = r.email_verified ? 1 : 0;
        await scope.userTransfer.insertUser(
          { id, email: r.email, name: r.name ?? r.email, email_verified: verified },
          now,
        );
        if (values.rows.length) await this.claims.storeImported(scope, id, { rows: values.rows, cleared: [] });
        await addLink(id);
        const fields = [
          'name',
          'email_verified',
          ...(values.rows.length ? ['claims'] : []),
          ...(provider ? ['upstream'] : []),
        ];
        return { position: item.position, email: r.email, result: 'created', user_id: id, changed: fields };
      }

      const changed: string[] = [];
      const name = r.name ?? existing.name;
      if (name !== existing.name) changed.push('name');
      const verified = r.email_verified === undefined ? existing.email_verified : r.email_verified ? 1 : 0;
      if (verified !== existing.email_verified) changed.push('email_verified');
      const keys = [...values.rows.map((v) => v.field_key), ...values.cleared];
      const current = new Map(
        (await scope.customClaims.userValues(existing.id, keys)).map((v) => [v.field_key, v.value_json]),
      );
      const rows = values.rows.filter((v) => current.get(v.field_key) !== v.value_json);
      const cleared = values.cleared.filter((k) => current.has(k));
      if (rows.length || cleared.length) changed.push('claims');
      if (provider && !linked) changed.push('upstream');
      if (!changed.length)
        return { position: item.position, email: r.email, result: 'unchanged', user_id: existing.id };

      if (changed.includes('name') || changed.includes('email_verified'))
        await scope.userTransfer.updateUser(existing.id, { name, email_verified: verified }, now);
      if (rows.length || cleared.length) await this.claims.storeImported(scope, existing.id, { rows, cleared });
      await addLink(existing.id);
      return { position: item.position, email: r.email, result: 'updated', user_id: existing.id, changed };
    } catch (e) {
      // The rules' refusals (a claim value that does not fit its schema, …) refuse this record only.
      if (e instanceof ApiError && e.status === 400) return refused(item, e.message);
      throw e;
    }
  }
}

function refused(item: ReadRecord, reason: string): RecordResult {
  const email = item.record?.email ?? item.email;
  return { position: item.position, ...(email ? { email } : {}), result: 'rejected', reason };
}
