/**
 * The rules of client ID metadata documents without a daemon: the cache's lifetime bounds, its
 * LRU bound and shared misses, the host lists, and the URL rules (docs/client-metadata-documents.md).
 */
import test from 'ava';
import type { Client } from '../../shared/db/entities.js';
import { thirdPartyOf } from '../../daemon/views/login.js';
import {
  DEFAULT_TTL_MS,
  DocumentCache,
  lifetimeOf,
  MAX_TTL_MS,
  MIN_TTL_MS,
  type CachedDocument,
} from '../../shared/services/client-metadata/cache.js';
import { documentUrlRefusal } from '../../shared/services/client-metadata/document.js';
import { policyOf, policyRefusal } from '../../shared/services/client-metadata/policy.js';

test('lifetime: max-age within [60 s, 24 h], Expires, no-store at the minimum, 5 min without headers', (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.is(lifetimeOf({ 'cache-control': 'public, max-age=600' }, now), 600_000);
  t.is(lifetimeOf({ 'cache-control': 'max-age=5' }, now), MIN_TTL_MS);
  t.is(lifetimeOf({ 'cache-control': 'max-age=31536000' }, now), MAX_TTL_MS);
  t.is(lifetimeOf({ 'cache-control': 'no-store, max-age=600' }, now), MIN_TTL_MS);
  t.is(lifetimeOf({ expires: new Date(now + 7200_000).toUTCString() }, now), 7200_000);
  t.is(lifetimeOf({}, now), DEFAULT_TTL_MS);
});

test('the cache: concurrent misses share one load, a failure is not kept, the least recently used goes first', async (t) => {
  const cache = new DocumentCache(2);
  let loads = 0;
  const entry = (): CachedDocument => ({ doc: {} as never, fetchedAt: 0, expiresAt: Date.now() + 60_000 });
  const load = async () => {
    loads++;
    await new Promise((r) => setTimeout(r, 10));
    return entry();
  };
  await Promise.all([cache.get('a', load), cache.get('a', load), cache.get('a', load)]);
  t.is(loads, 1);
  await t.throwsAsync(cache.get('bad', () => Promise.reject(new Error('no'))));
  t.is(cache.peek('bad'), undefined);
  await cache.get('b', load);
  cache.peek('a'); // a is now the most recently used
  await cache.get('c', load);
  t.truthy(cache.peek('a'));
  t.is(cache.peek('b'), undefined);
  t.is(cache.size, 2);
});

test('host lists: deny wins, *.suffix matches below it only, an empty allow list allows any host', (t) => {
  const url = 'https://app.agent.example/client.json';
  const on = (p: object) => policyRefusal(policyOf({ enabled: true, ...p }), url);
  t.is(on({}), undefined);
  t.is(on({ allowHosts: ['*.agent.example'] }), undefined);
  t.truthy(on({ allowHosts: ['*.app.agent.example'] }));
  t.truthy(on({ allowHosts: ['*.agent.example'], denyHosts: ['app.agent.example'] }));
  t.truthy(policyRefusal(policyOf(undefined), url), 'no section: disabled');
  t.truthy(policyRefusal(policyOf({ enabled: 'yes' }), url), 'a malformed section: disabled');
});

test('document URLs: https with a path, no query, fragment, credentials or dot segments, at most 128 characters', (t) => {
  t.is(documentUrlRefusal('https://agent.example/client.json'), undefined);
  for (const bad of [
    'http://agent.example/client.json',
    'https://agent.example/',
    'https://agent.example/c.json?x=1',
    'https://agent.example/c.json#f',
    'https://u:p@agent.example/c.json',
    'https://agent.example/a/../c.json',
    `https://agent.example/${'x'.repeat(120)}`,
  ])
    t.truthy(documentUrlRefusal(bad), bad);
});

test('the consent display: none for an admin-registered or first-party client; the document host only for a document client', (t) => {
  const base = {
    client_id: 'https://agent.example/client.json',
    first_party: false,
    logo_uri: 'https://cdn.agent.example/l.png',
    client_uri: 'javascript:alert(1)',
    policy_uri: 'https://agent.example/privacy',
    tos_uri: null,
  } as unknown as Client;
  const redirect = 'https://app.agent.example/cb';
  t.is(thirdPartyOf(base, redirect), undefined);
  t.is(thirdPartyOf({ ...base, registered_via: 'admin' }, redirect), undefined);
  t.is(thirdPartyOf({ ...base, registered_via: 'dynamic', first_party: true }, redirect), undefined);
  t.deepEqual(thirdPartyOf({ ...base, registered_via: 'dynamic' }, redirect), {
    logoUri: 'https://cdn.agent.example/l.png',
    clientUri: undefined,
    policyUri: 'https://agent.example/privacy',
    tosUri: undefined,
    redirectHost: 'app.agent.example',
  });
  t.is(thirdPartyOf({ ...base, registered_via: 'metadata_document' }, redirect)?.documentHost, 'agent.example');
});
