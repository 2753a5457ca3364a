/** Human-readable output helpers for the `iam` commands (the --json output needs none). */

export interface Column<R> {
  header: string;
  value: (row: R) => string;
}

/** Epoch milliseconds as an ISO 8601 UTC time to the second. */
export function time(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function list(values: readonly string[], sep = ', '): string {
  return values.length ? values.join(sep) : '-';
}

/** A left-aligned table with a header row; `empty` when there are no rows. */
export function table<R>(rows: readonly R[], columns: Column<R>[], empty: string): string {
  if (rows.length === 0) return empty;
  const cells = rows.map((r) => columns.map((c) => c.value(r)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n');
}

/** Aligned `label: value` lines, indented. */
export function fields(pairs: [string, string][], indent = '  '): string {
  const width = Math.max(...pairs.map(([k]) => k.length)) + 1;
  return pairs.map(([k, v]) => `${indent}${(k + ':').padEnd(width)} ${v}`).join('\n');
}
