/**
 * No source file over 450 lines (docs/architecture.md, "File size"). A file that grows past it
 * holds more than one thing: split it along the seam between them, so that the next change
 * (and its review) reads one part. Applies to the shipped sources, not to test/.
 */

/** The most lines a source file may have. */
export const MAX_SOURCE_LINES = 450;

/** The directories the limit applies to (repository-relative, as checkArchitecture sees paths). */
const SOURCE_DIRS = ['daemon/', 'shared/', 'cli/', 'migrations/', 'bench/'];

/** Lines as `wc -l` counts them, plus a last line without its newline. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** One violation per source file over MAX_SOURCE_LINES. */
export function checkFileSize(files: Map<string, string>): { file: string; rule: string; detail: string }[] {
  const out: { file: string; rule: string; detail: string }[] = [];
  for (const [file, text] of files) {
    if (!SOURCE_DIRS.some((d) => file.startsWith(d))) continue;
    const n = lineCount(text);
    if (n > MAX_SOURCE_LINES) {
      out.push({ file, rule: 'file-too-long', detail: `${n} lines (at most ${MAX_SOURCE_LINES}: split it)` });
    }
  }
  return out;
}
