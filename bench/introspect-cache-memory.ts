/**
 * Bytes per cached introspection entry, measured in-process: fills an IntrospectionService's
 * cache with N distinct verified tokens (claims parsed from JSON as a verification produces
 * them, so every string is a fresh one, as in the daemon) and reports the JavaScript heap
 * used after a full garbage collection, and the process's RSS, before and after, divided by N.
 *
 *   node --expose-gc dist/bench/introspect-cache-memory.js [--entries 1000000] [--json]
 *
 * Run by bench/introspect.ts --million beside the daemon's RSS figure; no signing or HTTP,
 * so it isolates the cache from everything else the daemon holds.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { IntrospectionService } from '../shared/services/introspection.js';
import type { AccessTokenClaims, TokenService } from '../shared/services/tokens.js';
import type { Database } from '../shared/db/index.js';

const { values: args } = parseArgs({
  options: { entries: { type: 'string', default: '1000000' }, json: { type: 'boolean', default: false } },
});
const N = Number(args.entries);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

// One tenant with a few clients (what the bench's daemon sees: one client's tokens); each token
// has its own jti; half are user tokens with a family and a user of their own.
const tenantId = randomUUID();
const clients = Array.from({ length: 4 }, () => randomBytes(12).toString('base64url'));
const now = Date.now();
const claimsText = (i: number) => {
  const user = i % 2 === 1;
  const clientId = clients[i % clients.length];
  return JSON.stringify({
    iss: 'https://iam.bench.test',
    sub: user ? randomUUID() : clientId,
    aud: 'https://api.bench.test',
    iat: Math.floor(now / 1000),
    exp: Math.floor(now / 1000) + 3600,
    jti: randomBytes(16).toString('base64url'),
    client_id: clientId,
    scope: user ? 'openid email' : 'api',
    tenant_id: tenantId,
    ...(user ? { fid: randomBytes(16).toString('base64url') } : {}),
  });
};

let next: AccessTokenClaims | undefined;
const tokens = { verifyAccessToken: () => Promise.resolve(next!) } as unknown as TokenService;
const service = new IntrospectionService(undefined as unknown as Database, tokens, { cacheEntries: N });

const measure = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, rss: m.rss };
};
const before = measure();
for (let i = 0; i < N; i++) {
  const token = `eyJ.${randomBytes(24).toString('base64url')}.${i}`;
  next = JSON.parse(claimsText(i)) as AccessTokenClaims;
  const v = await service.verify(token, now);
  if (!('entry' in v)) throw new Error('not verified');
  service.remember(token, v.entry);
}
next = undefined;
const after = measure();
if (service.cache.size !== N) throw new Error(`cache holds ${service.cache.size}, not ${N}`);
const result = {
  entries: N,
  heapBytesPerEntry: Math.round((after.heapUsed - before.heapUsed) / N),
  rssBytesPerEntry: Math.round((after.rss - before.rss) / N),
  heapUsedMiB: Math.round(after.heapUsed / 2 ** 20),
  rssMiB: Math.round(after.rss / 2 ** 20),
};
console.log(args.json ? JSON.stringify(result) : result);
