/**
 * Several scanners refreshing one tenant's upstream tokens at the same moment, each on its own
 * connection pool to one MariaDB database (as several daemons, or a daemon and
 * `iam external-tokens refresh`, would): the per-link lease (a conditional UPDATE with its row
 * count checked) lets exactly one of them call the upstream for each link. The upstream is a
 * real node-oidc-provider that counts its token endpoint calls and holds each refresh a while,
 * so the scanners' runs overlap. external-token-refresh-daemons.test.ts shows the same with real
 * processes: two daemons running the job and two `iam external-tokens refresh` runs.
 */
import test from 'ava';
import { createExternalTokenRefresh } from '../../shared/services/external-token-refresh/index.js';
import { DEFAULT_OUTBOUND_POLICY } from '../../shared/net/outbound.js';
import { TEST_SECRET_KEY, testDatabase, usingMysql } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { startRefreshUpstream } from '../helpers/refresh-upstream.js';
import { linkUser, openLinkToken, rawLink, registerUpstream } from '../helpers/refresh-links.js';

const actor = { type: 'system' as const, id: 'test' };
const LINKS = 6;
const SCANNERS = 3;

test('concurrent scanners on several connections call the upstream once per link', async (t) => {
  t.timeout(180_000);
  // This file is in the MariaDB lane's file list only; running it elsewhere is a mistake, not a skip.
  t.true(usingMysql(), 'IAM_TEST_DATABASE_URL must name a MariaDB/MySQL server (npm run test:mariadb)');
  const db = await testDatabase(t);
  const up = await startRefreshUpstream({ accessTtlSeconds: 3600, refreshDelayMs: 200 });
  t.teardown(() => up.close());
  const main = await openServices(db.url, db.dir);
  t.teardown(() => main.ds.destroy());
  const tenant = await activeTenant(main.provisioning, { name: 'Concurrent' }, actor);
  const providerId = await registerUpstream(main.ds, tenant.id, up);
  const links: { id: string; access: string }[] = [];
  for (let i = 0; i < LINKS; i++) {
    const user = await main.directory.createUser(tenant.id, { email: `c${i}@example.com`, name: 'C' }, actor);
    const tokens = await up.signIn(`c-${i}`);
    const id = await linkUser(main.ds, {
      tenantId: tenant.id,
      providerId,
      userId: user.id,
      upstream: up,
      sub: `c-${i}`,
      tokens,
      accessExpiresAt: Date.now() + 30_000,
    });
    links.push({ id, access: tokens.access_token });
  }
  t.is(up.tokenCalls.refresh_token ?? 0, 0);

  // Each scanner with its own pool, as on its own daemon.
  const pools = await Promise.all(Array.from({ length: SCANNERS }, () => openServices(db.url, db.dir)));
  t.teardown(() => Promise.all(pools.map((p) => p.ds.destroy())));
  const scanners = pools.map((p, i) =>
    createExternalTokenRefresh(p.ds, {
      secretKey: TEST_SECRET_KEY,
      policy: { ...DEFAULT_OUTBOUND_POLICY, allowLoopback: true, extraCaPem: up.cert.cert },
      holder: `daemon-${i}`,
    }),
  );
  const runs = await Promise.all(scanners.map((s) => s.runTenant(tenant.id)));

  t.is(up.tokenCalls.refresh_token, LINKS, 'one upstream call per link, whatever the number of scanners');
  t.is(
    runs.reduce((n, r) => n + r.refreshed, 0),
    LINKS,
  );
  t.is(
    runs.reduce((n, r) => n + r.invalid_grant + r.errors + r.backoff, 0),
    0,
    'no scanner used a refresh token another had already rotated',
  );
  for (const l of links) {
    const row = await rawLink(main.ds, tenant.id, l.id);
    t.not(openLinkToken(tenant.id, row, 'access'), l.access);
    t.is(row.lease_holder, null);
    t.is(row.state, 'active');
  }
});
