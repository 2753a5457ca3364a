/**
 * Reading from the operator: one line (a confirmation), or a secret without echo. Prompts go
 * to stderr so stdout stays the command's output. Stdin that is not a terminal is read as
 * lines too (`echo y | iam ...` is a deliberate act); end of input answers nothing, which
 * every caller treats as "no".
 */
import { createInterface } from 'node:readline';

/** One line from stdin, without its line ending; undefined at end of input. */
export function readLine(prompt?: string): Promise<string | undefined> {
  if (prompt) process.stderr.write(prompt);
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, terminal: false });
    let done = false;
    rl.once('line', (line) => {
      done = true;
      rl.close();
      // A piped answer is not echoed: end the prompt's line so the next output starts on its own.
      if (prompt && !process.stdin.isTTY) process.stderr.write('\n');
      resolve(line.replace(/\r$/, ''));
    });
    rl.once('close', () => {
      if (!done) resolve(undefined);
    });
  });
}

/** A secret typed at a terminal, not echoed. Only for a TTY stdin; callers check. */
export function readHidden(prompt: string): Promise<string | undefined> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const finish = (v: string | undefined) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      process.stderr.write('\n');
      resolve(v);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish(value);
        if (ch === '\u0003' || ch === '\u0004') return finish(undefined); // Ctrl-C, Ctrl-D
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/**
 * All of stdin, without the final line ending (`printf %s "$SECRET" | …` and `echo` both work):
 * how a secret is handed to a command without it appearing in argv or the shell history.
 */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
