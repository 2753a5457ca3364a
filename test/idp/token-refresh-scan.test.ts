/**
 * The upstream token scan against a REAL upstream (node-oidc-provider over HTTPS on loopback):
 * links made from tokens the upstream issued in a code flow; due links refreshed at the
 * upstream's token endpoint and others left alone; tokens sealed at rest; a refresh answer
 * without a refresh token keeps the old one (which still works); invalid_grant marks the link,
 * unless the row was rotated meanwhile; 503/429 back off and open the upstream's circuit;
 * round-robin fairness across tenants; disabled tenants never scheduled.
 */
import test, { type ExecutionContext } from 'ava';
import type { Database } from '../../shared/db/index.js';
import { createExternalTokenRefresh } from '../../shared/services/external-token-refresh/index.js';
import { ExternalTokenRefreshSettingsService } from '../../shared/services/external-token-refresh/config.js';
import type { UpstreamBridge } from '../../shared/services/external-token-refresh/scan.js';
import { ExternalTokenRefreshService } from '../../shared/services/external-token-refresh/scan.js';
import { DEFAULT_OUTBOUND_POLICY } from '../../shared/net/outbound.js';
import { TEST_SECRET_KEY, testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { startRefreshUpstream, type RefreshUpstream } from '../helpers/refresh-upstream.js';
import { linkUser, openLinkToken, rawLink, registerUpstream, setLink } from '../helpers/refresh-links.js';

const actor = { type: 'system' as const, id: 'test' };
const MIN = 60_000;

async function world(t: ExecutionContext, upOpts: Parameters<typeof startRefreshUpstream>[0] = {}) {
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  t.teardown(() => services.ds.destroy());
  const up = await startRefreshUpstream(upOpts);
  t.teardown(() => up.close());
  const scan = (extra: Partial<ConstructorParameters<typeof ExternalTokenRefreshService>[2]> = {}) =>
    createExternalTokenRefresh(services.ds, {
      secretKey: TEST_SECRET_KEY,
      policy: { ...DEFAULT_OUTBOUND_POLICY, allowLoopback: true, extraCaPem: up.cert.cert },
      holder: `test-${Math.random()}`,
      ...extra,
    });
  return { db, services, up, scan, ds: services.ds };
}

/** A tenant with the upstream registered, and `n` users each signed in at the upstream and linked. */
async function tenantWithLinks(
  w: { services: Awaited<ReturnType<typeof openServices>>; up: RefreshUpstream; ds: Database },
  name: string,
  expiresIn: number[],
) {
  const tenant = await activeTenant(w.services.provisioning, { name }, actor);
  const providerId = await registerUpstream(w.ds, tenant.id, w.up);
  const links: { id: string; userId: string; refresh: string; access: string }[] = [];
  for (const [i, ms] of expiresIn.entries()) {
    const user = await w.services.directory.createUser(tenant.id, { email: `${name}-${i}@example.com`, name }, actor);
    const tokens = await w.up.signIn(`${name}-sub-${i}`);
    const id = await linkUser(w.ds, {
      tenantId: tenant.id,
      providerId,
      userId: user.id,
      upstream: w.up,
      sub: `${name}-sub-${i}`,
      tokens,
      accessExpiresAt: Date.now() + ms,
    });
    links.push({ id, userId: user.id, refresh: tokens.refresh_token, access: tokens.access_token });
  }
  return { tenant, providerId, links };
}

test('due links are refreshed at the upstream, links not due are left alone, tokens stay sealed at rest', async (t) => {
  // Upstream access tokens live an hour: once refreshed, a link is not due again.
  const w = await world(t, { accessTtlSeconds: 3600 });
  // Default threshold 300 s: 1 min and already expired are due; 1 h is not.
  const { tenant, links } = await tenantWithLinks(w, 'due', [MIN, -10_000, 60 * MIN]);
  const notDueBefore = await rawLink(w.ds, tenant.id, links[2].id);
  const calls = w.up.tokenCalls.refresh_token ?? 0;

  const run = await w.scan().runTenant(tenant.id);
  t.is(run.refreshed, 2);
  t.is(run.invalid_grant + run.backoff + run.errors + run.circuit_open, 0);
  t.is((w.up.tokenCalls.refresh_token ?? 0) - calls, 2, 'one upstream call per due link');

  for (const l of links.slice(0, 2)) {
    const row = await rawLink(w.ds, tenant.id, l.id);
    const access = openLinkToken(tenant.id, row, 'access');
    t.not(access, l.access, 'a new access token from the upstream');
    t.true(Number(row.access_expires_at) > Date.now() + MIN, 'expiry moved by the upstream expires_in');
    t.truthy(row.last_refreshed_at);
    // Encrypted at rest: the raw row never holds a token in clear.
    const raw = JSON.stringify(row);
    t.false(raw.includes(access));
    t.false(raw.includes(openLinkToken(tenant.id, row, 'refresh')));
  }
  t.deepEqual(await rawLink(w.ds, tenant.id, links[2].id), notDueBefore, 'the link not due is untouched');

  // Nothing is due any more: a second run calls nobody.
  const again = await w.scan().runTenant(tenant.id);
  t.is(again.refreshed, 0);
  t.is((w.up.tokenCalls.refresh_token ?? 0) - calls, 2);
  // The run records are readable (what `iam external-tokens status` lists).
  const recent = await w.scan().recentRuns(5);
  t.is(recent.length, 2);
  t.deepEqual(
    recent.map((r) => [r.trigger_kind, r.refreshed]),
    [
      ['manual', 0],
      ['manual', 2],
    ],
  );
});

test('a refresh answer without a refresh token keeps the stored one, which still works', async (t) => {
  const w = await world(t, { rotateRefreshToken: false, omitRefreshTokenOnRefresh: true });
  const { tenant, links } = await tenantWithLinks(w, 'keep', [MIN]);
  const before = await rawLink(w.ds, tenant.id, links[0].id);
  const r1 = await w.scan().runTenant(tenant.id);
  t.is(r1.refreshed, 1);
  t.is(w.up.stripped.count, 1, 'the upstream answer really came without a refresh_token');
  const after = await rawLink(w.ds, tenant.id, links[0].id);
  t.is(openLinkToken(tenant.id, before, 'refresh'), links[0].refresh);
  t.is(openLinkToken(tenant.id, after, 'refresh'), links[0].refresh, 'the stored refresh token is kept');
  t.not(openLinkToken(tenant.id, after, 'access'), links[0].access);
  // Due again: the kept refresh token is accepted by the upstream.
  await setLink(w.ds, tenant.id, links[0].id, { access_expires_at: Date.now() + MIN });
  const r2 = await w.scan().runTenant(tenant.id);
  t.is(r2.refreshed, 1);
  t.is(r2.invalid_grant, 0);
});

test('invalid_grant marks the link reauthentication_required; a row rotated meanwhile is left alone', async (t) => {
  const w = await world(t);
  const { tenant, links } = await tenantWithLinks(w, 'revoked', [MIN, MIN]);
  // The upstream grant is revoked for the first link.
  await w.up.revoke(links[0].refresh);
  const run = await w.scan().runTenant(tenant.id, { userId: links[0].userId });
  t.is(run.invalid_grant, 1);
  t.is(run.refreshed, 0);
  const row = await rawLink(w.ds, tenant.id, links[0].id);
  t.is(row.state, 'reauthentication_required');
  t.is(row.last_error_code, 'invalid_grant');
  t.is(row.lease_holder, null);
  // Marked links are not scanned again.
  const calls = w.up.tokenCalls.refresh_token;
  t.is((await w.scan().runTenant(tenant.id, { userId: links[0].userId })).invalid_grant, 0);
  t.is(w.up.tokenCalls.refresh_token, calls);

  // Second link: another daemon rotates its refresh token while our call is under way, and our
  // (now superseded) token is refused: the re-read sees the change and marks nothing.
  await w.up.revoke(links[1].refresh);
  const real = w.scan();
  const bridge = (real as unknown as { bridge: UpstreamBridge }).bridge;
  const racing: UpstreamBridge = {
    openTokens: (link, row) => bridge.openTokens(link, row),
    seal: (link, tokens) => bridge.seal(link, tokens),
    refresh: async (link, token) => {
      const answer = await bridge.refresh(link, token);
      const rotated = bridge.seal(link, {
        accessToken: 'rotated-elsewhere',
        refreshToken: 'rotated-refresh',
        idToken: null,
        accessExpiresAt: Date.now() + 60 * MIN,
      });
      await setLink(w.ds, tenant.id, links[1].id, { ...rotated });
      return answer;
    },
  };
  const scan2 = new ExternalTokenRefreshService(w.ds, racing, { holder: 'racer' });
  const r2 = await scan2.runTenant(tenant.id, { userId: links[1].userId });
  t.is(r2.invalid_grant, 0);
  t.is(r2.skipped_not_due, 1);
  const row2 = await rawLink(w.ds, tenant.id, links[1].id);
  t.is(row2.state, 'active');
  t.is(openLinkToken(tenant.id, row2, 'refresh'), 'rotated-refresh');
});

test('429 and 5xx back off the link with jitter, and the circuit of that upstream opens', async (t) => {
  const w = await world(t);
  const { tenant, links } = await tenantWithLinks(w, 'flaky', [MIN, MIN, MIN]);
  w.up.failNext(1, 429);
  w.up.failNext(2, 503);
  const scan = w.scan({ circuitThreshold: 2, circuitCooldownMs: 10 * MIN, backoffBaseMs: MIN, random: () => 0.5 });
  const calls = w.up.tokenCalls.refresh_token ?? 0;
  const run = await scan.runTenant(tenant.id);
  t.is(run.backoff, 2);
  t.is(run.circuit_open, 1, 'after two failures in a row the third link is not even tried');
  t.is((w.up.tokenCalls.refresh_token ?? 0) - calls, 2);
  const now = Date.now();
  const rows = await Promise.all(links.map((l) => rawLink(w.ds, tenant.id, l.id)));
  const backedOff = rows.filter((r) => r.refresh_failures === 1);
  t.is(backedOff.length, 2);
  t.deepEqual(backedOff.map((r) => r.last_error_code).sort(), ['upstream_http_429', 'upstream_http_503']);
  for (const r of backedOff) {
    t.is(r.lease_holder, null);
    // base 60 s × 2^0, jitter pinned at 0.5: three quarters of it.
    t.true(Number(r.lease_until) > now + 30_000 && Number(r.lease_until) <= now + MIN);
  }
  // The circuit is shared through the database: a new scanner skips the upstream too.
  const run2 = await w.scan({ circuitThreshold: 2 }).runTenant(tenant.id);
  t.is(run2.circuit_open, 1);
  t.is(run2.refreshed, 0);
  t.is((w.up.tokenCalls.refresh_token ?? 0) - calls, 2);
});

test('fairness: with scheduledTenantBatchSize=1, three scheduled runs visit three different tenants', async (t) => {
  const w = await world(t);
  const settings = new ExternalTokenRefreshSettingsService(w.ds);
  const tenants = [];
  for (const name of ['fa', 'fb', 'fc']) {
    const x = await tenantWithLinks(w, name, [MIN, MIN]);
    await settings.update(x.tenant.id, { enabled: true, scheduledTenantBatchSize: 1, batchSize: 1 }, actor);
    tenants.push(x);
  }
  // A fourth tenant with due links but scanning disabled: never visited by the schedule.
  const off = await tenantWithLinks(w, 'off', [MIN]);
  const scan = w.scan();
  const visited: string[] = [];
  for (let i = 0; i < 3; i++) {
    const run = await scan.runScheduled();
    t.truthy(run);
    t.is(run!.tenants.length, 1);
    t.is(run!.refreshed, 1, 'batchSize 1: one link of the tenant per run');
    visited.push(run!.tenants[0]);
  }
  t.deepEqual([...visited].sort(), tenants.map((x) => x.tenant.id).sort());
  // The round robin wraps: the fourth run is the first tenant's turn again.
  const fourth = await scan.runScheduled();
  t.is(fourth!.tenants[0], visited[0]);
  t.is((await rawLink(w.ds, off.tenant.id, off.links[0].id)).last_refreshed_at, null);
  // With every tenant disabled the scheduled run does nothing at all.
  for (const x of tenants) await settings.update(x.tenant.id, { enabled: false }, actor);
  t.is(await scan.runScheduled(), undefined);
});

test("a disabled provider's links are not refreshed, and nothing is counted against them", async (t) => {
  const w = await world(t);
  const { tenant, providerId } = await tenantWithLinks(w, 'disabled', [MIN]);
  await w.ds.query("UPDATE upstream_identity_providers SET status = 'disabled' WHERE tenant_id = ? AND id = ?", [
    tenant.id,
    providerId,
  ]);
  const calls = w.up.tokenCalls.refresh_token ?? 0;
  const run = await w.scan().runTenant(tenant.id);
  t.like(run, { refreshed: 0, errors: 0, backoff: 0, skipped_not_due: 0 });
  t.is(w.up.tokenCalls.refresh_token ?? 0, calls);
});
