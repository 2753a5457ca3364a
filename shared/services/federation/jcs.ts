/**
 * JSON Canonicalization Scheme (RFC 8785): one byte sequence per JSON value, so a hash of it
 * (a source profile version's `schemaHash`) does not change with key order or number spelling.
 *
 * - Object members are sorted by their names' UTF-16 code units (§3.2.3), which is what
 *   JavaScript's default string comparison does; arrays keep their order.
 * - Numbers are serialized as ECMAScript's Number.prototype.toString does (§3.2.2.3); -0 is
 *   `0`; NaN and the infinities are not JSON and are refused.
 * - Strings are serialized as ECMAScript's JSON.stringify does (§3.2.2.2): `\"`, `\\`, and the
 *   control characters U+0000 to U+001F escaped (`\b \t \n \f \r` short, the rest as `\u00xx`
 *   in lowercase hex); everything else as itself. Lone surrogates are not I-JSON (RFC 7493
 *   §2.1) and are refused.
 * - `undefined` members are left out as JSON.stringify leaves them out; values that are not
 *   JSON (functions, symbols, bigints) are refused.
 * - A value nesting objects or arrays more than MAX_JSON_DEPTH (64) levels deep is refused:
 *   the walk recurses once per level, and an unbounded depth would overflow the stack (a
 *   RangeError, not a CanonicalizationError). The daemon refuses such bodies earlier
 *   (daemon/middleware/koa-body-depth.ts); this bound holds for every other caller too.
 */
import { MAX_JSON_DEPTH } from '../../json-depth.js';

export class CanonicalizationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalizationError';
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function str(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new CanonicalizationError('a string holds a lone surrogate (not I-JSON)');
  return JSON.stringify(s);
}

function num(n: number): string {
  if (!Number.isFinite(n)) throw new CanonicalizationError(`${n} is not a JSON number`);
  // Number.prototype.toString gives the shortest round-trip form (ECMA-262 Number::toString), '0' for -0.
  return Object.is(n, -0) ? '0' : String(n);
}

/** The RFC 8785 canonical form of `value`, as a string (hash its UTF-8 bytes). */
export function canonicalize(value: unknown): string {
  return canon(value, 0);
}

function canon(value: unknown, depth: number): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return num(value);
    case 'string':
      return str(value);
    case 'object': {
      if (depth >= MAX_JSON_DEPTH)
        throw new CanonicalizationError(`nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep`);
      if (Array.isArray(value))
        return `[${value.map((v) => (v === undefined ? 'null' : canon(v, depth + 1))).join(',')}]`;
      const maybe = value as { toJSON?: () => unknown };
      if (typeof maybe.toJSON === 'function') return canon(maybe.toJSON(), depth);
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${str(k)}:${canon(obj[k], depth + 1)}`).join(',')}}`;
    }
    default:
      throw new CanonicalizationError(`a ${typeof value} is not a JSON value`);
  }
}
