/**
 * RFC 8785 (JSON Canonicalization Scheme), checked against the RFC's own examples: §3.2.2 (the
 * serialization of primitives), §3.2.3 (sorting by UTF-16 code units) and Appendix B (numbers).
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../shared/json-depth.js';
import { canonicalize, CanonicalizationError } from '../../shared/services/federation/jcs.js';
import { schemaHash } from '../../shared/services/federation/source-profiles.js';

test('RFC 8785 §3.2.2: the example with numbers, a string of escapes and literals', (t) => {
  const input = JSON.parse(
    '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
      '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
      '"literals": [null, true, false]}',
  ) as unknown;
  t.is(
    canonicalize(input),
    '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
      '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
  );
});

test('RFC 8785 §3.2.3: members sorted by UTF-16 code units, not code points or locale', (t) => {
  const input = {
    '\u20ac': 'Euro Sign',
    '\r': 'Carriage Return',
    '\ufb33': 'Hebrew Letter Dalet With Dagesh',
    '1': 'One',
    '\ud83d\ude00': 'Emoji: Grinning Face',
    '\u0080': 'Control',
    '\u00f6': 'Latin Small Letter O With Diaeresis',
  };
  t.is(
    canonicalize(input),
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis",' +
      '"€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  );
});

test('RFC 8785 Appendix B: numbers as ECMAScript serializes them', (t) => {
  const bits = (hex: string) => Buffer.from(hex, 'hex').readDoubleBE(0);
  const cases: [string, string][] = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  for (const [hex, want] of cases) t.is(canonicalize(bits(hex)), want, hex);
  for (const bad of [NaN, Infinity, -Infinity]) t.throws(() => canonicalize(bad), { message: /not a JSON number/ });
});

test('strings: control characters in lowercase \\u00xx, short escapes, no escaping of non-ASCII or /', (t) => {
  t.is(canonicalize('\u0000\u001f\b\t\n\f\r"\\/é\u2028'), '"\\u0000\\u001f\\b\\t\\n\\f\\r\\"\\\\/é\u2028"');
  t.throws(() => canonicalize('\ud800'), { message: /lone surrogate/ });
  t.throws(() => canonicalize({ ['\udc00']: 1 }), { message: /lone surrogate/ });
  t.is(canonicalize('\ud83d\ude00'), '"😀"');
});

test('nesting, undefined members left out, non-JSON values refused', (t) => {
  t.is(
    canonicalize({ b: [1, { d: true, c: null }], a: undefined, '': 'empty' }),
    '{"":"empty","b":[1,{"c":null,"d":true}]}',
  );
  t.is(canonicalize([]), '[]');
  t.is(canonicalize({}), '{}');
  t.throws(() => canonicalize(10n), { message: /bigint/ });
  t.throws(() => canonicalize({ f: () => 1 }), { message: /function/ });
});

test('schemaHash is the SHA-256 of the canonical form and does not depend on key order', (t) => {
  const a = { type: 'object', properties: { email: { type: 'string' }, age: { type: 'number', min: 1.0 } } };
  const b = JSON.parse('{"properties":{"age":{"min":1,"type":"number"},"email":{"type":"string"}},"type":"object"}');
  t.is(schemaHash(a), schemaHash(b));
  t.is(schemaHash(a), createHash('sha256').update(canonicalize(a), 'utf8').digest('hex'));
  t.not(schemaHash(a), schemaHash({ ...a, type: 'array' }));
});

test('depth: 64 levels canonicalize; a 65th, or 100,000 (which would overflow the stack), is a CanonicalizationError', (t) => {
  const nest = (levels: number): unknown => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);
  t.is(canonicalize(nest(64)), `${'['.repeat(64)}${']'.repeat(64)}`);
  for (const levels of [65, 5000, 100_000])
    t.throws(() => canonicalize(nest(levels)), {
      instanceOf: CanonicalizationError,
      message: /more than 64 levels deep/,
    });
  const objects = JSON.parse(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`) as unknown;
  t.throws(() => schemaHash(objects), { instanceOf: CanonicalizationError });
});

test('nestsDeeperThan: iterative, counts objects and arrays alike, stops at the first level past the limit', (t) => {
  t.false(nestsDeeperThan(null));
  t.false(nestsDeeperThan('x'));
  t.false(nestsDeeperThan({}, 1));
  t.true(nestsDeeperThan({ a: [] }, 1));
  t.false(nestsDeeperThan({ a: [{}], b: 1 }, 3));
  t.true(nestsDeeperThan({ a: [{}], b: [[[1]]] }, 3));
  t.false(nestsDeeperThan(JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)));
  t.true(nestsDeeperThan(JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`)));
  // A `__proto__` key from JSON.parse is an own property, walked like any other.
  t.true(nestsDeeperThan(JSON.parse('{"__proto__":{"x":[]}}'), 2));
});
