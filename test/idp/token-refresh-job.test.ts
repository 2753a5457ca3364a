/**
 * The scheduled `external-token-refresh` job in the real daemon: a tenant whose configuration
 * is enabled gets its due upstream tokens refreshed without anyone asking, a disabled tenant's
 * are left alone, and the run is recorded.
 */
import test from 'ava';
import { ExternalTokenRefreshSettingsService } from '../../shared/services/external-token-refresh/config.js';
import { startDaemon } from '../helpers/daemon.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { startRefreshUpstream } from '../helpers/refresh-upstream.js';
import { linkUser, openLinkToken, rawLink, registerUpstream } from '../helpers/refresh-links.js';
import { until } from '../helpers/poll.js';

const actor = { type: 'system' as const, id: 'test' };

test('the daemon refreshes the due links of enabled tenants on its schedule, and only theirs', async (t) => {
  t.timeout(150_000);
  const db = await testDatabase(t);
  const up = await startRefreshUpstream({ accessTtlSeconds: 3600 });
  t.teardown(() => up.close());
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const settings = new ExternalTokenRefreshSettingsService(ds);
  const made: Record<string, { tenantId: string; linkId: string; access: string }> = {};
  for (const name of ['on', 'off']) {
    const tenantId = (await activeTenant(provisioning, { name }, actor)).id;
    const providerId = await registerUpstream(ds, tenantId, up);
    const user = await directory.createUser(tenantId, { email: `${name}@example.com`, name }, actor);
    const tokens = await up.signIn(`job-${name}`);
    const linkId = await linkUser(ds, {
      tenantId,
      providerId,
      userId: user.id,
      upstream: up,
      sub: `job-${name}`,
      tokens,
      accessExpiresAt: Date.now() + 30_000,
    });
    await settings.update(tenantId, { enabled: name === 'on' }, actor);
    made[name] = { tenantId, linkId, access: tokens.access_token };
  }
  await ds.destroy();

  const d = await startDaemon(db.url, db.dir, {
    IAM_OUTBOUND_ALLOW_LOOPBACK: 'true',
    IAM_OUTBOUND_CA_FILE: up.cert.certFile,
    IAM_LOG_LEVEL: 'debug',
  });
  t.teardown(() => d.stop());
  // The job runs every 30 s; its first tick refreshes the enabled tenant's link.
  t.true(
    await until(
      () => d.logs.some((l) => l.job === 'external-token-refresh' && l.outcome === 'ok' && l.msg === 'job finished'),
      { timeoutMs: 90_000, what: () => d.output() },
    ),
  );
  t.is(up.tokenCalls.refresh_token, 1, 'one call: the enabled tenant’s link only');
  const check = await openServices(db.url, db.dir);
  t.teardown(() => check.ds.destroy());
  const on = await rawLink(check.ds, made.on.tenantId, made.on.linkId);
  t.not(openLinkToken(made.on.tenantId, on, 'access'), made.on.access);
  const off = await rawLink(check.ds, made.off.tenantId, made.off.linkId);
  t.is(openLinkToken(made.off.tenantId, off, 'access'), made.off.access);
  t.is(off.last_refreshed_at, null);
});
