import { createWriteStream } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { IMPORT_FORMATS, type ImportFormat } from '../../../shared/services/user-transfer/index.js';

export default class UsersExport extends BaseCommand<typeof UsersExport> {
  static override summary = "Export a tenant's users as JSONL or CSV (the import's formats).";
  static override description =
    "Streams the tenant's users page by page: email, name, email_verified, the active custom claims' values and " +
    'the upstream links (issuer and subject). No secrets: no passkey, no token, no upstream token. The output ' +
    'imported with `iam users import` into an empty tenant gives the same users. Formats: docs/directory.md, ' +
    '"Users: import and export".';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --format jsonl --output users.jsonl',
    {
      description: 'CSV on stdout.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --format csv > users.csv',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    format: Flags.string({ description: 'jsonl or csv', options: [...IMPORT_FORMATS], required: true }),
    output: Flags.string({ description: 'the file to write (default: stdout)' }),
  };
  // The records are the output: --json would only wrap them.
  static override enableJsonFlag = false;

  async run(): Promise<void> {
    await this.requireTenant(this.flags.tenant);
    const chunks = await this.services.userTransfer.exportUsers(this.flags.tenant, this.flags.format as ImportFormat);
    const out: Writable = this.flags.output ? createWriteStream(this.flags.output) : process.stdout;
    // pipeline waits for the writer (backpressure), so memory holds a page, not the directory.
    await pipeline(Readable.from(chunks), out, { end: out !== process.stdout });
    if (this.flags.output)
      process.stderr.write(`Exported the users of tenant ${this.flags.tenant} to ${this.flags.output}\n`);
  }
}
