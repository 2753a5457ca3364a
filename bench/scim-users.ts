/**
 * SCIM /Users at scale: a tenant of 100,000 users (SQLite), and the time of the lookups an
 * identity provider makes before it creates or updates a user, through the SCIM service
 * (filter parsed, checked, answered, rendered): `userName eq` and `externalId eq` (answered
 * from their unique indexes, docs/scim.md "Filters"), `GET /Users/{id}`, against filters that
 * no index answers (evaluated over keyset batches of 500: a full scan, bounded memory).
 *
 *   npx tsc -p . && node --expose-gc dist/bench/scim-users.js [--users 100000]
 *
 * Results: bench/results/scim-users.{json,md}.
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { TenantScope } from '../shared/repositories/index.js';
import { buildServices } from '../shared/container.js';
import { createTestDatabase } from '../test/helpers/db.js';
import { activeTenant, openServices } from '../test/helpers/seed.js';
import { machine, summarize, writeResults } from './lib/stats.js';

const { values: args } = parseArgs({ options: { users: { type: 'string', default: '100000' } } });
const USERS = Number(args.users);
const BASE = 'https://id.example.com/scim/v2';
const actor = { type: 'system' as const, id: 'bench' };

const db = await createTestDatabase();
const { ds, config, provisioning } = await openServices(db.url, db.dir);
const tenant = await activeTenant(provisioning, { name: 'SCIM bench' }, actor);
const scim = buildServices(ds, config, undefined, { role: 'cli' }).scim.users;

// The users, written through the SCIM repository in transactions of 1,000 (what a POST writes).
const t0 = performance.now();
for (let start = 0; start < USERS; start += 1000) {
  await ds.transaction(async (tx) => {
    const users = new TenantScope(tx, tenant.id).scimUsers;
    for (let i = start; i < Math.min(USERS, start + 1000); i++)
      await users.insert(
        `usr_bench${String(i).padStart(8, '0')}`,
        {
          email: `user${i}@example.com`,
          name: `User ${i}`,
          standard_claims: null,
          user_name: `User${i}@Example.com`,
          external_id: `ext-${i}`,
          scim_attributes: {
            userName: `User${i}@Example.com`,
            name: { givenName: 'User', familyName: String(i) },
            emails: [{ value: `user${i}@example.com`, type: 'work', primary: true }],
            userType: i % 10 === 0 ? 'Contractor' : 'Employee',
            ...(i % 100 === 0 ? { title: 'Manager' } : {}),
          },
        },
        Date.now(),
      );
  });
}
const seedMs = performance.now() - t0;

async function time(runs: number, fn: (i: number) => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    await fn(i);
    samples.push(performance.now() - s);
  }
  return summarize(samples);
}
const pick = (i: number) => Math.floor((i * 7919) % USERS);
const list = (filter: string, count = 100) => scim.list(tenant.id, { filter, count: String(count) }, BASE);

const userNameEq = await time(500, (i) => list(`userName eq "user${pick(i)}@example.com"`));
const externalIdEq = await time(500, (i) => list(`externalId eq "ext-${pick(i)}"`));
const andEq = await time(200, (i) => list(`userName eq "user${pick(i)}@example.com" and userType eq "Employee"`));
const byId = await time(500, (i) => scim.get(tenant.id, `usr_bench${String(pick(i)).padStart(8, '0')}`, BASE));
// Every indexed lookup found its one user (a miss would be fast too, and prove nothing).
for (let i = 0; i < 50; i++)
  if ((await list(`userName eq "user${pick(i)}@example.com"`)).totalResults !== 1) throw new Error('lookup missed');
// The heap retained after a collection (--expose-gc), and the peak resident size around it.
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const rss = () => {
  gc();
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10;
};
const rssSamples = [rss()];
const scanTitle = await time(3, async () => {
  await list('title pr', 10);
  rssSamples.push(rss());
});
const scanSw = await time(3, async () => {
  await list('name.familyName sw "9999"', 10);
  rssSamples.push(rss());
});
const check = await list('title pr', 10);

await ds.destroy();
await db.drop();

const result = {
  machine: machine(),
  users: USERS,
  seedMs: Math.round(seedMs),
  indexed: { userNameEq, externalIdEq, userNameEqAnd: andEq, getById: byId },
  scan: { titlePresent: scanTitle, familyNameStartsWith: scanSw, matchesOfTitlePr: check.totalResults },
  heapMiBAfterGcBeforeAndAfterEachScan: rssSamples,
};
const row = (name: string, s: ReturnType<typeof summarize>) =>
  `| ${name} | ${s.count} | ${s.p50} | ${s.p95} | ${s.max} |`;
writeResults(
  'scim-users',
  result,
  `# SCIM /Users lookups (SQLite, ${USERS.toLocaleString('en')} users in one tenant)

${result.machine.at} · ${result.machine.cpus} × ${result.machine.cpuModel} · Node ${result.machine.node}

Measured through the SCIM service (\`ScimUserService.list\` / \`get\`: the filter parsed and
checked, the rows read, rendered with meta and ETag, projected), in process, on the shared
2-core machine (times are noisy and pessimistic). Users written through the SCIM repository in
transactions of 1,000: ${result.seedMs} ms.

| Lookup | runs | p50 ms | p95 ms | max ms |
|---|---|---|---|---|
${row('`userName eq "…"` (ux_users_user_name)', userNameEq)}
${row('`externalId eq "…"` (ux_users_external_id)', externalIdEq)}
${row('`userName eq "…" and userType eq "Employee"` (the index, then the rest on one row)', andEq)}
${row('`GET /Users/{id}` (primary key)', byId)}
${row('`title pr` (no index: keyset scan of every user)', scanTitle)}
${row('`name.familyName sw "9999"` (no index: scan)', scanSw)}

The indexed lookups read one B-tree path (logarithmic in the tenant's size); the scans read
every user in batches of 500 (${result.scan.matchesOfTitlePr} matches of \`title pr\` counted, 10 kept),
and their time grows with the tenant. The V8 heap retained after a full collection (MiB),
before the first scan and after each of the six: ${rssSamples.join(', ')}. Flat: a scan holds one
batch and one page, never the tenant's rows (each scan's time includes that forced collection).

`,
);
