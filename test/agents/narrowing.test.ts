/**
 * The narrowing rule of an agent grant PATCH (docs/agents.md, "What a PATCH may change") and the
 * If-Match comparison, as functions: exact decimal amounts, own members only, prototype names.
 */
import test from 'ava';
import { deepEqual, widening } from '../../shared/services/agents/narrowing.js';
import { agentGrantEtag, ifMatchSatisfied } from '../../shared/services/agents/grants.js';

const pay = (amount: unknown, currency = 'EUR') => ({
  type: 'payment_initiation',
  instructedAmount: { currency, amount },
});

test('amounts compare as exact decimals in the same currency', (t) => {
  const consented = [pay('100.00')];
  for (const a of ['100', '100.0', '99.999999', '0', 100, 99.5])
    t.is(widening(consented, [pay(a)]), undefined, String(a));
  for (const a of ['100.000001', '101', 100.01, '1e3', '-1', 'NaN', 'ten']) {
    const w = widening(consented, [pay(a)]);
    t.is(w?.member, 'instructedAmount', String(a));
  }
  t.is(widening(consented, [pay('1', 'USD')])?.member, 'instructedAmount');
  // Floating point would round 0.1 + 0.2; the decimal comparison does not.
  t.is(widening([pay('0.3')], [pay('0.30000000000000001')])?.member, 'instructedAmount');
});

test('members: arrays shrink, others stay equal, none added or dropped; prototype names are plain names', (t) => {
  const c = [{ type: 'constructor', actions: ['read', 'write'], identifier: 'x', toString: ['a'] }];
  t.is(widening(c, [{ type: 'constructor', actions: ['read'], identifier: 'x', toString: ['a'] }]), undefined);
  t.like(widening(c, [{ type: 'constructor', actions: ['read'], identifier: 'y', toString: ['a'] }]), {
    index: 0,
    member: 'identifier',
  });
  t.like(widening(c, [{ type: 'constructor', actions: ['read'], identifier: 'x' }]), { member: 'toString' });
  const withProto = JSON.parse(
    '{"type":"constructor","actions":["read"],"identifier":"x","toString":["a"],"__proto__":[1]}',
  );
  t.like(widening(c, [withProto]), { member: '__proto__' });
  t.like(widening(c, [{ type: '__proto__' }]), { member: 'type' });
  t.like(widening(c, [{ type: 'hasOwnProperty' }]), { member: 'type' });
  // One of several consented entries of the type covering the update is enough.
  const two = [
    { type: 'docs', locations: ['a'] },
    { type: 'docs', locations: ['b', 'c'] },
  ];
  t.is(widening(two, [{ type: 'docs', locations: ['c'] }]), undefined);
  t.like(widening(two, [{ type: 'docs', locations: ['a', 'c'] }]), { member: 'locations' });
  t.true(deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }));
  t.false(deepEqual({ a: 1 }, JSON.parse('{"a":1,"__proto__":{}}')));
});

test('If-Match: `*`, a list, strong comparison only', (t) => {
  const e = agentGrantEtag(3, true);
  t.is(e, '"g3-c1"');
  t.true(ifMatchSatisfied('*', e));
  t.true(ifMatchSatisfied(`"x", ${e}`, e));
  t.false(ifMatchSatisfied(`W/${e}`, e));
  t.false(ifMatchSatisfied('g3-c1', e));
  t.false(ifMatchSatisfied('', e));
  t.false(ifMatchSatisfied(agentGrantEtag(3, false), e));
});
