/**
 * The one polling helper of the tests: waits for a condition rather than sleeping a fixed time,
 * and when the condition never holds, fails with what was awaited (not a bare `false`).
 */

export interface PollOptions {
  /** Give up after this long (default 15 s). */
  timeoutMs?: number;
  /** Wait this long between two checks (default 50 ms). */
  intervalMs?: number;
  /** What is awaited, for the timeout's message; a function is called only on a timeout. */
  what?: string | (() => string);
}

export class PollTimeout extends Error {}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Checks `cond` until it returns a truthy value, and returns that value (`true` for a boolean
 * condition, so `t.true(await until(…))` reads as the assertion it is). Throws PollTimeout
 * naming `what` when `timeoutMs` passes first; the last check runs at the deadline, so a slow
 * check does not lose its final chance.
 */
export async function until<T>(cond: () => T | Promise<T>, opts: PollOptions = {}): Promise<Truthy<T>> {
  const { timeoutMs = 15_000, intervalMs = 50 } = opts;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const last = Date.now() >= end;
    const v = await cond();
    if (v) return v as Truthy<T>;
    if (last) break;
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, end - Date.now()))));
  }
  const what = typeof opts.what === 'function' ? opts.what() : (opts.what ?? 'the condition');
  throw new PollTimeout(`${what}: timed out after ${timeoutMs} ms`);
}
