/**
 * How deep a JSON value nests, bounded: the daemon refuses a request body nested deeper than
 * {@link MAX_JSON_DEPTH} (docs/errors.md) before any route sees it, and the code that walks
 * a JSON value recursively (RFC 8785 canonicalization, shared/services/federation/jcs.ts)
 * refuses the same depth, so no body can exhaust the stack: JSON.parse itself reads any
 * depth, but JSON.stringify, zod and every recursive walk after it do not.
 *
 * 64 is far above the deepest body the API takes (a source profile's schema, an approval's
 * `scope_json`, a federation payload: a handful of levels) and far below what overflows V8's
 * stack (a few thousand frames).
 */

/** Most levels of objects and arrays a JSON value may nest: `{}` and `[]` are one level. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `value` nests objects or arrays more than `max` levels deep. Iterative (an explicit
 * stack, no recursion) and linear in the number of values visited; it stops at the first
 * container past the limit, so a 100,000-level body costs `max` steps down its spine.
 */
export function nestsDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    // Own enumerable values only, as JSON.parse makes them (a `__proto__` key is an own one).
    const children: unknown[] = Array.isArray(node) ? (node as unknown[]) : Object.values(node);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
