/**
 * Reads an import file as a stream of records, one at a time, so a file of any length is
 * imported in bounded memory: JSONL line by line, CSV through csv-parse's
 * streaming parser. Each record carries its line number for the report.
 */
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { ApiError } from '../../errors.js';
import { checkCsvHeader, readCsvRow, readJsonLine, type ImportFormat, type ReadRecord } from './records.js';

/** A line longer than this is refused rather than buffered (a record is a few hundred bytes). */
export const MAX_RECORD_BYTES = 64 * 1024;

export async function* readRecords(input: Readable, format: ImportFormat): AsyncGenerator<ReadRecord> {
  if (format === 'jsonl') yield* readJsonl(input);
  else yield* readCsv(input);
}

/**
 * Lines split from the stream's chunks: the stream's async iterator reads the next chunk only
 * when the batch before was written (backpressure), so memory holds a chunk and a batch.
 */
async function* readJsonl(input: Readable): AsyncGenerator<ReadRecord> {
  input.setEncoding('utf8');
  let rest = '';
  let n = 0;
  const one = (raw: string): ReadRecord | undefined => {
    n += 1;
    // A byte-order mark before the first line is not part of the JSON; CRLF ends a line too.
    const text = (n === 1 ? raw.replace(/^\uFEFF/, '') : raw).replace(/\r$/, '');
    if (!text.trim()) return undefined;
    return readJsonLine(n, text);
  };
  // Set while skipping the rest of a line too long to be a record (refused without holding it).
  let skipping = false;
  for await (const chunk of input as AsyncIterable<string>) {
    let text = rest + chunk;
    if (skipping) {
      const nl = text.indexOf('\n');
      if (nl < 0) continue;
      text = text.slice(nl + 1);
      skipping = false;
    }
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const r = one(text.slice(start, nl));
      start = nl + 1;
      if (r) yield r;
    }
    rest = text.slice(start);
    if (rest.length > MAX_RECORD_BYTES) {
      n += 1;
      yield { position: n, error: `longer than ${MAX_RECORD_BYTES} characters` };
      rest = '';
      skipping = true;
    }
  }
  if (rest) {
    const r = one(rest);
    if (r) yield r;
  }
}

async function* readCsv(input: Readable): AsyncGenerator<ReadRecord> {
  const parser = parse({
    bom: true,
    info: true,
    // A row with too many or too few fields is refused on its own, not the whole file.
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: MAX_RECORD_BYTES,
  });
  input.on('error', (e) => parser.destroy(e));
  input.pipe(parser);
  let header: string[] | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!header) {
        header = record.map((h) => h.trim());
        checkCsvHeader(header);
        continue;
      }
      yield readCsvRow(info.lines, header, record);
    }
  } catch (e) {
    if (e instanceof ApiError) throw e;
    // A CSV syntax error (an unclosed quote) ends the file: what follows cannot be framed.
    const err = e as { code?: string; lines?: number; message?: string };
    if (err.code?.startsWith('CSV_'))
      throw new ApiError(400, 'invalid_import_file', `line ${err.lines ?? '?'}: CSV: ${err.message ?? err.code}`);
    throw e;
  }
  if (!header) throw new ApiError(400, 'invalid_import_header', 'CSV header: the file is empty');
}
