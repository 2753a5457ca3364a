import { createReadStream, statSync } from 'node:fs';
import { extname } from 'node:path';
import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { IMPORT_FORMATS, type ImportCounts, type ImportFormat } from '../../../shared/services/user-transfer/index.js';

/** Rejected records listed in the --json summary; past this only the count (stderr has every line). */
const JSON_REJECTIONS = 1000;

export default class UsersImport extends BaseCommand<typeof UsersImport> {
  static override summary = 'Import users from a JSONL or CSV file (idempotent by email).';
  static override description =
    'Streams the file and writes its records in batches of 200, each batch in one transaction: a user, its ' +
    'custom claim values and its upstream link are written together or not at all, and an interrupted import ' +
    'run again converges on the file. A record whose email exists updates the fields it gives, or is unchanged. ' +
    'Each rejected record is reported on stderr as "line N: <email>: <reason>"; the others are written. ' +
    'Formats: docs/directory.md, "Users: import and export". Exit 0: every record imported (or unchanged); ' +
    '1: some record rejected, or an error; 2: usage.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --file users.jsonl',
    {
      description: 'What would change, writing nothing.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --file users.csv --dry-run --json',
    },
    {
      description: 'A file without a telling extension.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --file export.txt --format jsonl',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    file: Flags.string({ description: 'the file to import (.jsonl or .csv)', required: true }),
    format: Flags.string({ description: 'jsonl or csv (default: from the extension)', options: [...IMPORT_FORMATS] }),
    'dry-run': Flags.boolean({ description: 'report what would change and write nothing' }),
  };

  async run(): Promise<ImportCounts & { dry_run: boolean; rejected_records: unknown[] }> {
    const format = this.format();
    try {
      if (!statSync(this.flags.file).isFile()) this.error(`--file: ${this.flags.file} is not a file`, { exit: 2 });
    } catch (e) {
      if ((e as { oclif?: unknown }).oclif) throw e;
      this.error(`--file: cannot read ${this.flags.file}`, { exit: 2 });
    }
    await this.requireTenant(this.flags.tenant);
    const dryRun = this.flags['dry-run'] === true;
    // Progress only for a person watching: stderr a terminal, and never under --json.
    const progress = process.stderr.isTTY && !this.jsonEnabled();
    const rejections: unknown[] = [];
    let seen = 0;
    const counts = await this.services.userTransfer.importStream(
      this.flags.tenant,
      createReadStream(this.flags.file),
      format,
      {
        actor: this.actor,
        dryRun,
        onBatch: (results) => {
          seen += results.length;
          for (const r of results) {
            if (r.result !== 'rejected') continue;
            if (progress) process.stderr.write('\r\x1b[K');
            process.stderr.write(`line ${r.position}: ${r.email ? `${r.email}: ` : ''}${r.reason}\n`);
            if (rejections.length < JSON_REJECTIONS)
              rejections.push({ line: r.position, email: r.email, reason: r.reason });
          }
          if (progress) process.stderr.write(`\r\x1b[K${seen} records…`);
        },
      },
    );
    if (progress) process.stderr.write('\r\x1b[K');
    const verb = dryRun ? 'would be ' : '';
    const head = dryRun ? 'Dry run: nothing written. ' : '';
    this.log(
      `${head}${counts.created} ${verb}created, ${counts.updated} ${verb}updated, ` +
        `${counts.unchanged} unchanged, ${counts.rejected} rejected.`,
    );
    if (counts.rejected > 0) process.exitCode = 1;
    return {
      dry_run: dryRun,
      ...counts,
      rejected_records: rejections,
      ...(counts.rejected > rejections.length ? { rejected_records_truncated: true } : {}),
    };
  }

  private format(): ImportFormat {
    if (this.flags.format) return this.flags.format as ImportFormat;
    const ext = extname(this.flags.file).toLowerCase();
    if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
    if (ext === '.csv') return 'csv';
    this.error(`--format: cannot tell the format of ${this.flags.file} from its extension; give jsonl or csv`, {
      exit: 2,
    });
  }
}
