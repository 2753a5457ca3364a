/**
 * The per-daemon cache of ID-JAG issuers' key sets (shared/services/token-exchange/id-jag.ts),
 * against a real HTTPS issuer on loopback: one fetch for concurrent misses, the cooldown on
 * unknown kids and on failures, and a stale set refetched whatever the cooldown.
 */
import test from 'ava';
import { DEFAULT_OUTBOUND_POLICY, type OutboundPolicy } from '../../shared/net/outbound.js';
import { IdJagError, IssuerKeys, verifyIdJag } from '../../shared/services/token-exchange/id-jag.js';
import { startIssuer, type TestIssuer } from '../helpers/https-issuer.js';

let idp: TestIssuer;
let policy: OutboundPolicy;
const HOUR = 3_600_000;

test.before(async () => {
  idp = await startIssuer();
  policy = { ...DEFAULT_OUTBOUND_POLICY, allowLoopback: true, extraCaPem: idp.cert.cert };
});
test.after.always(async () => {
  await idp?.close();
});

const jwksHits = () => idp.hits['/jwks'] ?? 0;
const failureOf = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof IdJagError)) throw new Error(`expected an IdJagError, got ${String(e)}`);
  return e.failure;
};

test.serial('concurrent misses share one fetch; hits are served from the cache', async (t) => {
  const keys = new IssuerKeys({ policy, cooldownMs: HOUR });
  const before = jwksHits();
  const kid = idp.published[0].kid;
  await Promise.all([
    keys.keySetFor(idp.issuer, kid),
    keys.keySetFor(idp.issuer, kid),
    keys.keySetFor(idp.issuer, kid),
  ]);
  t.is(jwksHits(), before + 1);
  await keys.keySetFor(idp.issuer, kid);
  await keys.keySetFor(idp.issuer, undefined);
  t.is(jwksHits(), before + 1);
});

test.serial(
  'an unknown kid inside the cooldown is refused without a fetch; without cooldown it refetches',
  async (t) => {
    const slow = new IssuerKeys({ policy, cooldownMs: HOUR });
    const eager = new IssuerKeys({ policy, cooldownMs: 0 });
    await slow.keySetFor(idp.issuer, undefined);
    await eager.keySetFor(idp.issuer, undefined);
    const before = jwksHits();
    t.is(await failureOf(slow.keySetFor(idp.issuer, 'nope')), 'unknown_kid');
    t.is(jwksHits(), before);
    t.is(await failureOf(eager.keySetFor(idp.issuer, 'nope')), 'unknown_kid');
    t.is(jwksHits(), before + 1);
  },
);

test.serial('a stale key set is refetched even when the cooldown is longer than the cache lifetime', async (t) => {
  const keys = new IssuerKeys({ policy, cooldownMs: HOUR, ttlMs: 0 });
  const before = jwksHits();
  await keys.keySetFor(idp.issuer, undefined);
  await keys.keySetFor(idp.issuer, undefined);
  t.is(jwksHits(), before + 2);
});

test.serial('a failing issuer is not retried inside the cooldown', async (t) => {
  const keys = new IssuerKeys({ policy: { ...policy, allowLoopback: false }, cooldownMs: HOUR });
  const details: string[] = [];
  const logged = new IssuerKeys({
    policy: { ...policy, allowLoopback: false },
    cooldownMs: HOUR,
    onFetchError: (_i, d) => details.push(d),
  });
  t.is(await failureOf(keys.keySetFor(idp.issuer, undefined)), 'issuer_unavailable');
  t.is(await failureOf(keys.keySetFor(idp.issuer, undefined)), 'issuer_unavailable');
  t.is(await failureOf(logged.keySetFor(idp.issuer, undefined)), 'issuer_unavailable');
  t.is(await failureOf(logged.keySetFor(idp.issuer, undefined)), 'issuer_unavailable');
  t.is(details.length, 1, 'one fetch attempt, one log line');
  t.regex(details[0], /blocked_address: .*loopback/);
});

test.serial('verifyIdJag: an issuer outside the allow-list is refused before any fetch', async (t) => {
  const keys = new IssuerKeys({ policy, cooldownMs: 0 });
  const before = { ...idp.hits };
  const token = await idp.sign({ clientId: 'c1', audience: 'https://as.example.com' });
  t.is(
    await failureOf(
      verifyIdJag(token, {
        keys,
        allowedIssuers: ['https://other.example.com'],
        audience: 'https://as.example.com',
        clientId: 'c1',
      }),
    ),
    'issuer_not_allowed',
  );
  t.deepEqual(idp.hits, before);
  const claims = await verifyIdJag(token, {
    keys,
    allowedIssuers: [idp.issuer],
    audience: 'https://as.example.com',
    clientId: 'c1',
  });
  t.is(claims.iss, idp.issuer);
  t.is(claims.client_id, 'c1');
});
