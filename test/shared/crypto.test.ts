/** The random pool behind ids, tokens and nonces (shared/crypto.ts). */
import test from 'ava';
import { newId, randomBase64, randomToken, SecretBox } from '../../shared/crypto.js';

test('random values have the length asked for, up to the whole pool', (t) => {
  for (const bytes of [0, 1, 12, 32, 256, 4095, 4096]) {
    t.is(Buffer.from(randomToken(bytes), 'base64url').length, bytes);
    t.is(Buffer.from(randomBase64(bytes), 'base64').length, bytes);
  }
  // Values taken one after another never share bytes, across a refill of the pool too.
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) seen.add(randomToken(16));
  t.is(seen.size, 1000);
  t.regex(newId('ten'), /^ten_[A-Za-z0-9_-]{16}$/);
});

test('a request larger than the pool is refused with a RangeError, not answered with fewer bytes', (t) => {
  for (const bytes of [4097, 65_536]) {
    t.throws(() => randomToken(bytes), { instanceOf: RangeError, message: /at most 4096/ });
    t.throws(() => randomBase64(bytes), { instanceOf: RangeError });
  }
  for (const bytes of [-1, 1.5, Number.NaN]) t.throws(() => randomToken(bytes), { instanceOf: RangeError });
  // The pool still works afterwards.
  t.is(Buffer.from(randomToken(32), 'base64url').length, 32);
  const box = new SecretBox('k'.repeat(32), 'test');
  t.is(box.open(box.seal('payload', 'aad'), 'aad'), 'payload');
});
