/**
 * The compact introspection cache entry (shared/services/introspection.ts): the response it
 * builds on the way out carries exactly the claims a fresh verification would answer with, the
 * claims that repeat are held once per client, and an entry never outlives 60 s or its exp.
 */
import test from 'ava';
import { CACHE_TTL_MS, CachedTokenFactory } from '../../shared/services/introspection.js';
import type { AccessTokenClaims } from '../../shared/services/tokens.js';

const now = Date.UTC(2026, 10, 25, 2, 0, 0, 500);
const sec = Math.floor(now / 1000);
const base = {
  iss: 'https://iam.example.test',
  aud: ['https://api.example.test', 'https://other.example.test'],
  client_id: 'client-1',
  scope: 'openid email',
  tenant_id: 'tenant-1',
};
const userToken = (i: number): AccessTokenClaims => ({
  ...base,
  sub: `user-${i}`,
  jti: `jti-${i}`,
  fid: `family-${i}`,
  iat: sec,
  exp: sec + 3600,
  act: { sub: 'agent "quoted" \u2028' },
});

test('the built response equals the claims with active, token_type and tenant', (t) => {
  const f = new CachedTokenFactory();
  const c = userToken(1);
  t.deepEqual(JSON.parse(f.create(c, now).json()), { ...c, active: true, token_type: 'Bearer', tenant: 'tenant-1' });
  const cc: AccessTokenClaims = {
    ...base,
    aud: 'https://api.example.test',
    sub: 'client-1',
    jti: 'j',
    iat: sec,
    exp: sec + 60,
  };
  t.deepEqual(JSON.parse(f.create(cc, now).json()), { ...cc, active: true, token_type: 'Bearer', tenant: 'tenant-1' });
});

test('the fields the per-request checks read', (t) => {
  const e = new CachedTokenFactory().create(userToken(2), now);
  t.is(e.jti, 'jti-2');
  t.is(e.fid, 'family-2');
  t.is(e.sub, 'user-2');
  t.is(e.clientId, 'client-1');
  t.is(e.tenantId, 'tenant-1');
  t.deepEqual([...e.aud], base.aud);
  const cc = new CachedTokenFactory().create({ ...base, sub: 'client-1', jti: 'j', exp: sec + 60 }, now);
  t.is(cc.fid, '', 'client_credentials: no family');
  t.false('iat' in JSON.parse(cc.json()), 'no iat in, none out');
});

test('tokens of one client share one profile; another scope makes another', (t) => {
  const f = new CachedTokenFactory();
  const a = f.create(userToken(3), now);
  const b = f.create(userToken(4), now);
  t.is(a.profile, b.profile);
  t.not(f.create({ ...userToken(5), scope: 'openid' }, now).profile, a.profile);
});

test('an entry lasts at most 60 s, and never past exp', (t) => {
  const f = new CachedTokenFactory();
  const long = f.create(userToken(6), now);
  t.true(long.until * 1000 <= now + CACHE_TTL_MS);
  t.true(long.until * 1000 > now + CACHE_TTL_MS - 1000);
  const short = f.create({ ...userToken(7), exp: sec + 5 }, now);
  t.is(short.until, sec + 5);
  const odd = f.create({ ...userToken(8), exp: sec + 5.5 }, now);
  t.true(odd.until * 1000 <= now, 'a fractional exp is not cached');
  t.is(JSON.parse(odd.json()).exp, sec + 5.5);
});
