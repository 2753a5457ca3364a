/**
 * The sealing of upstream secrets and tokens: AEAD under a key named by its id, bound to the
 * row and column (a value moved elsewhere does not open), and older keys still open.
 */
import test from 'ava';
import { sealingKeyId, UnknownSealingKeyError, UpstreamSealer } from '../../shared/services/upstream-idp/index.js';

const KEY = 'k'.repeat(43);
const OLD = 'o'.repeat(43);

test('a sealed token opens for its row and column only, and hides the plaintext', (t) => {
  const s = new UpstreamSealer(KEY);
  const sealed = s.seal('upstream-access-token', 'upstream_identity_links.access_token_sealed', 'uil_1');
  t.false(sealed.includes('upstream-access-token'));
  t.is(s.open(sealed, s.keyId, 'upstream_identity_links.access_token_sealed', 'uil_1'), 'upstream-access-token');
  t.throws(() => s.open(sealed, s.keyId, 'upstream_identity_links.access_token_sealed', 'uil_2'));
  t.throws(() => s.open(sealed, s.keyId, 'upstream_identity_links.refresh_token_sealed', 'uil_1'));
});

test('the key id names the key; rows sealed under an older key still open, new rows use the current one', (t) => {
  t.is(sealingKeyId(KEY), sealingKeyId(KEY));
  t.not(sealingKeyId(KEY), sealingKeyId(OLD));
  t.regex(sealingKeyId(KEY), /^usk_[A-Za-z0-9_-]{16}$/);
  const before = new UpstreamSealer(OLD);
  const tokens = before.sealLinkTokens('uil_1', { accessToken: 'at', refreshToken: 'rt', accessExpiresAt: 1 });
  const after = new UpstreamSealer(KEY, OLD);
  t.is(after.keyId, sealingKeyId(KEY));
  t.deepEqual(after.openLinkTokens({ id: 'uil_1', ...tokens }), {
    accessToken: 'at',
    refreshToken: 'rt',
    idToken: null,
  });
  const err = t.throws(() => new UpstreamSealer(KEY).openLinkTokens({ id: 'uil_1', ...tokens }));
  t.true(err instanceof UnknownSealingKeyError);
});
