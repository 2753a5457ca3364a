/**
 * The layering of docs/architecture.md, checked on the source tree: SQL only in the data layer
 * and the migrations; TypeORM and the SQL helpers only in the data layer; the daemon and the
 * CLI reach data through services, never repositories; no service constructed outside the container
 * (shared/container.ts); no import cycles, not even through types. The first tests run
 * the check on made-up files, to show that each rule bites.
 */
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { checkArchitecture, projectRoot, readSources } from './helpers/architecture.js';

const rulesOf = (files: Record<string, string>) =>
  checkArchitecture(new Map(Object.entries(files))).map((v) => `${v.file}: ${v.rule}`);

test('the check bites: SQL in a route or a CLI command', (t) => {
  t.deepEqual(
    rulesOf({
      'daemon/routes/x.ts': "const r = await one(deps.ds, 'SELECT id FROM tenants WHERE id = ?', [id]);",
      'cli/commands/x/y.ts': 'await ds.query(`UPDATE tenants SET name = ? WHERE id = ?`, [n, id]);',
      'shared/services/z.ts': "await exec(db, 'DELETE FROM sessions WHERE id = ?', [id]);",
      'shared/repositories/ok.ts': "await exec(db, 'DELETE FROM sessions WHERE tenant_id = ? AND id = ?', [t, id]);",
      'daemon/routes/prose.ts':
        "// We SELECT the row FROM tenants in the service\nthrow new Error('Select a tenant from the list');",
    }),
    [
      'daemon/routes/x.ts: sql-outside-data-layer',
      'cli/commands/x/y.ts: sql-outside-data-layer',
      'shared/services/z.ts: sql-outside-data-layer',
    ],
  );
});

test('the check bites: the SQL helpers, TypeORM or a repository imported from above', (t) => {
  t.deepEqual(
    rulesOf({
      'daemon/routes/a.ts': "import { one } from '../../shared/db/sql.js';",
      'cli/commands/b.ts': "import { TenantScope } from '../../shared/repositories/index.js';",
      'shared/services/c.ts': "import type { DataSource } from 'typeorm';",
      'shared/services/d.ts':
        "import type { Db } from '../db/index.js';\nimport type { Client } from '../db/entities.js';",
      'shared/services/e.ts': "import { ClientEntity } from '../db/entities.js';",
    }),
    [
      'daemon/routes/a.ts: data-layer-internals',
      'cli/commands/b.ts: repository-from-daemon-or-cli',
      'shared/services/c.ts: typeorm-outside-data-layer',
      'shared/services/e.ts: data-layer-internals',
    ],
  );
});

test('the check bites: an import cycle', (t) => {
  t.deepEqual(
    rulesOf({
      'shared/services/a.ts': "import { b } from './b.js';",
      'shared/services/b.ts': "import { a } from './a.js';",
      'shared/services/c.ts': "import type { d } from './d.js';",
      'shared/services/d.ts': "import type { c } from './c.js';",
    }),
    ['shared/services/a.ts: import-cycle', 'shared/services/c.ts: import-cycle'],
  );
});

test('the check bites: a source file over 450 lines', (t) => {
  const lines = (n: number) => 'export const x = 1;\n'.repeat(n);
  t.deepEqual(
    rulesOf({
      'shared/services/long.ts': lines(451),
      'daemon/routes/long-no-final-newline.ts': lines(450) + 'export const y = 2;',
      'cli/commands/at-limit.ts': lines(450),
      'migrations/at-limit-no-final-newline.ts': lines(449) + 'export const y = 2;',
      'test/long.test.ts': lines(451),
    }),
    ['shared/services/long.ts: file-too-long', 'daemon/routes/long-no-final-newline.ts: file-too-long'],
  );
});

test('the check bites: an outbound request outside the one outbound client', (t) => {
  t.deepEqual(
    rulesOf({
      'shared/services/a.ts': "import { request } from 'node:https';\nrequest({ host: 'x' }).end();",
      'shared/services/b.ts': "import * as web from 'node:http';\nweb.get('http://10.0.0.1/');",
      'daemon/routes/c.ts': "import https from 'https';\nhttps.request('https://x');",
      'cli/commands/d.ts': "const r = await fetch('https://example.com/');",
      'shared/services/e.ts': "await globalThis.fetch('https://example.com/');",
      'shared/services/f.ts': "import { request as send } from 'undici';\nawait send('https://x');",
      'shared/services/g.ts': "import { get as grab } from 'node:https';\ngrab('https://x');",
      // Not requests: a method named fetch, a string, a comment, a type import, the client itself, a bench.
      'shared/services/ok.ts':
        "import type { IncomingHttpHeaders } from 'node:http';\nimport { createServer } from 'node:http';\n" +
        "await this.keys.fetch(url); // fetch('x')\nconst s = `fetch(url)`;\ncreateServer();",
      'shared/net/outbound.ts': "import { request } from 'node:https';\nrequest({}); fetch('x');",
      'bench/h.ts': "await fetch('http://127.0.0.1/');",
    }),
    [
      'shared/services/a.ts: outbound-outside-client',
      'shared/services/b.ts: outbound-outside-client',
      'daemon/routes/c.ts: outbound-outside-client',
      'cli/commands/d.ts: outbound-outside-client',
      'shared/services/e.ts: outbound-outside-client',
      'shared/services/f.ts: outbound-outside-client',
      'shared/services/g.ts: outbound-outside-client',
    ],
  );
});

test('the check bites: a middleware that decides by the request path', (t) => {
  t.deepEqual(
    rulesOf({
      'daemon/middleware/koa-a.ts': "const FORM_PATHS = new Set(['/token', '/revoke']);",
      'daemon/middleware/koa-b.ts': 'const USER = /^\\/api\\/(user|account)/;',
      'daemon/middleware/koa-c.ts': 'export const m = (ctx, next) => (byPath.get(ctx.path) ?? next)(ctx, next);',
      'daemon/middleware/koa-d.ts': "if (ctx.request.path.startsWith(prefix)) ctx.set('X', '1');",
      'daemon/middleware/koa-e.ts': 'if (ctx.url === wanted) return;',
      'daemon/middleware/koa-ok.ts':
        "// Not for '/token': the route declares it.\n" +
        'log.info({ path: ctx.path }, `No route for ${ctx.method} ${ctx.path}.`);',
      'daemon/routes/r.ts': "api.add(router, { method: 'post', path: '/token' });",
    }),
    [
      'daemon/middleware/koa-a.ts: path-list-in-middleware',
      'daemon/middleware/koa-b.ts: path-list-in-middleware',
      'daemon/middleware/koa-c.ts: path-list-in-middleware',
      'daemon/middleware/koa-d.ts: path-list-in-middleware',
      'daemon/middleware/koa-e.ts: path-list-in-middleware',
    ],
  );
});

test('the check bites: a service constructed outside the container', (t) => {
  const services = {
    'shared/errors.ts': 'export class ApiError extends Error {}',
    'shared/services/widgets.ts': [
      'export class WidgetService {',
      '  constructor(private readonly ds: Database, private readonly limit: number) {}',
      '}',
      'export class WidgetRefused extends ApiError {}',
      'export class WidgetGone extends WidgetRefused {}',
      // A factory (declared to return a service); and a function that only returns data.
      'export function createWidgets(ds: Database, config: Config): WidgetService {',
      '  return new WidgetService(ds, config.widgetLimit);',
      '}',
      'export function widgetView(w: Widget): { id: string } {',
      '  return { id: w.id };',
      '}',
    ].join('\n'),
    'shared/services/gadgets.ts': 'export class GadgetService {}\nconst w = new WidgetService(ds, 3);',
    'shared/services/job-leases.ts': 'export class JobLeases {}',
  };
  t.deepEqual(
    rulesOf({
      ...services,
      'daemon/routes/widgets.ts': 'const widgets = new WidgetService(deps.ds, 10);',
      'cli/commands/widgets/list.ts': 'const widgets = createWidgets(this.ds, this.settings);',
      'shared/net/widgets.ts': "import { WidgetService as W } from '../services/widgets.js';\nconst w = new W(ds, 1);",
      'daemon/jobs/other.ts': 'const leases = new JobLeases(ds);',
      'daemon/routes/fine.ts': [
        "// not a service: new WidgetService( in a comment, errors thrown, views, the container's getters",
        "throw new WidgetGone('gone');",
        'const v = widgetView(await deps.widgets.get(id));',
        'const x = deps.widgets as WidgetService;',
      ].join('\n'),
      'shared/container.ts':
        'get widgets(): WidgetService { return (this.#made.widgets ??= new WidgetService(this.ds, 10)); }',
      'daemon/jobs/scheduler.ts': 'this.leases = new JobLeases(ds);',
      'test/widgets.test.ts': 'const widgets = new WidgetService(ds, 10);',
    }),
    [
      'daemon/routes/widgets.ts: service-outside-container',
      'cli/commands/widgets/list.ts: service-outside-container',
      'shared/net/widgets.ts: service-outside-container',
      'daemon/jobs/other.ts: service-outside-container',
    ],
  );
});

test('the source tree keeps the layering of docs/architecture.md', (t) => {
  const root = projectRoot(fileURLToPath(import.meta.url));
  const files = readSources(root, ['daemon', 'cli', 'shared', 'migrations', 'bench']);
  t.true(files.size > 50, 'the sources were found');
  const found = checkArchitecture(files).map((v) => `${v.file}: ${v.rule}: ${v.detail}`);
  t.deepEqual(found, []);
});
