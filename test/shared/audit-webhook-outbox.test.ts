/**
 * The audit webhook's outbox entry is written in the transaction of the audit event: a rolled
 * back change leaves neither, a committed one both (docs/plugins.md). And only where the plugin
 * is enabled and configured: another tenant's events write nothing.
 */
import test from 'ava';
import { audit, setAuditSink } from '../../shared/services/audit.js';
import { Outbox } from '../../shared/services/outbox.js';
import { AuditWebhookSink } from '../../shared/services/plugins/audit-webhook.js';
import { builtinPlugins, PluginRuntime, PluginService } from '../../shared/services/plugins/index.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('an audit event and its audit webhook entry commit together or not at all', async (t) => {
  const db = await testDatabase(t);
  const { ds, config, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const a = await activeTenant(provisioning, { name: 'Hooked' }, actor);
  const b = await activeTenant(provisioning, { name: 'Not hooked' }, actor);
  const runtime = new PluginRuntime(ds, config.secretKey, builtinPlugins({ allowLoopback: true }));
  const outbox = new Outbox(ds, config.secretKey);
  t.teardown(setAuditSink(new AuditWebhookSink(runtime, outbox)));
  const plugins = new PluginService(ds, runtime);
  await plugins.configure(
    'audit-webhook',
    a.id,
    { url: 'https://127.0.0.1:9/siem', signingSecret: 'whsec_0123456789abcdefghijklmnop' },
    actor,
  );
  await plugins.enable('audit-webhook', a.id, actor);

  const count = async (sql: string, id: string) => Number((await ds.query<{ n: unknown }[]>(sql, [id]))[0].n);
  const entries = (id: string) =>
    count("SELECT COUNT(*) AS n FROM outbox WHERE kind = 'audit-webhook' AND tenant_id = ?", id);
  const events = (id: string) =>
    count("SELECT COUNT(*) AS n FROM audit_events WHERE action = 'test.change' AND tenant_id = ?", id);
  const event = (tenantId: string) => ({ tenantId, action: 'test.change', targetType: 'test', targetId: 'x' });

  const before = await entries(a.id);
  await t.throwsAsync(
    ds.transaction(async (tx) => {
      await audit(tx, actor, event(a.id));
      throw new Error('rolled back');
    }),
    { message: 'rolled back' },
  );
  t.is(await entries(a.id), before, 'a rolled-back event leaves no entry');
  t.is(await events(a.id), 0);

  await ds.transaction((tx) => audit(tx, actor, event(a.id)));
  t.is(await entries(a.id), before + 1);
  t.is(await events(a.id), 1);
  const row = (
    await ds.query<{ payload_sealed: string; id: string }[]>(
      "SELECT id, payload_sealed FROM outbox WHERE kind = 'audit-webhook' AND tenant_id = ? ORDER BY created_at DESC",
      [a.id],
    )
  )[0];
  t.false(row.payload_sealed.includes('test.change'), 'the payload is sealed');
  t.is(outbox.openSealed<{ action: string }>(row.id, row.payload_sealed).action, 'test.change');

  await ds.transaction((tx) => audit(tx, actor, event(b.id)));
  t.is(await entries(b.id), 0, 'a tenant without the plugin writes no entry');
});
