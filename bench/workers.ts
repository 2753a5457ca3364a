/**
 * Workers scaling: introspection and the login flow on one daemon with IAM_WORKERS=1 and one
 * with IAM_WORKERS=N, side by side over one database, loaded in alternation round after round
 * (the order flipped each round), so each round's scaling ratio (N workers ÷ 1 worker)
 * compares runs seconds apart. Meant for MariaDB, where worker processes share nothing but
 * the database server (`npm run bench:workers` runs it in the MariaDB lane).
 *
 *   node dist/bench/workers.js --database-url mysql://… [--workers 2] [--rounds 3]
 *        [--duration 10] [--connections 50] [--login-duration 15] [--concurrency 24] [--warmup 3]
 *
 * Introspection: autocannon with `--connections` on one cached token (bench/lib/load.ts).
 * Login: the whole five-request flow with a real SMTP delivery, `--concurrency` virtual users
 * (bench/lib/login-driver.ts, bench/lib/our-login.ts).
 * Results: bench/results/workers-scaling-<mariadb|sqlite>.{json,md}.
 */
import { parseArgs } from 'node:util';
import { load, type Run } from './lib/load.js';
import { measureLogins, type LoginRun } from './lib/login-driver.js';
import { median } from './lib/stats.js';
import { prepareOurLogin, type OurLogin } from './lib/our-login.js';
import { loadAverage } from './lib/proc.js';
import { machine, writeResults } from './lib/stats.js';
import { clientCredentialsToken } from '../test/helpers/seed.js';

const { values: args } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    workers: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    'login-duration': { type: 'string', default: '15' },
    concurrency: { type: 'string', default: '24' },
    warmup: { type: 'string', default: '3' },
  },
});
const N = Number(args.workers);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const loginOpts = {
  concurrency: CONCURRENCY,
  warmupSeconds: Number(args.warmup),
  durationSeconds: Number(args['login-duration']),
};

const setup = await prepareOurLogin({ concurrency: CONCURRENCY, databaseUrl: args['database-url'], apiClients: true });
const api = setup.api!;
const one = await setup.start({ name: 'IAM_WORKERS=1', workers: 1 });
const many = await setup.start({ name: `IAM_WORKERS=${N}`, workers: N });
// Each daemon is its own issuer (its URL): each introspects a token it issued.
const bodies = new Map<OurLogin, string>();
for (const d of [one, many])
  bodies.set(
    d,
    new URLSearchParams({ token: await clientCredentialsToken(d.url, api.app.id, api.app.secret) }).toString(),
  );
const rsAuth = 'Basic ' + Buffer.from(`${api.resourceServer.id}:${api.resourceServer.secret}`).toString('base64');
const active = (b: string) => b.includes('"active":true');
const introspect = (d: OurLogin, name: string, duration = Number(args.duration)) =>
  load({
    name,
    url: `${d.url}/introspect`,
    body: bodies.get(d)!,
    authorization: rsAuth,
    connections: Number(args.connections),
    duration,
    check: active,
  });

const loadBefore = loadAverage();
console.log(`workers scaling: ${setup.kind}, 1 against ${N} workers, ${ROUNDS} rounds; load ${loadBefore.join(' ')}`);
// Unrecorded first, so that nothing is measured while the JIT compilers are still at work.
for (const d of [one, many]) {
  await introspect(d, `warm-up, ${d.name}`, Number(args.warmup));
  await measureLogins(d, { ...loginOpts, warmupSeconds: 0, durationSeconds: Number(args.warmup) });
}
const rounds: { round: number; introspect: Run[]; login: LoginRun[]; introspectRatio: number; loginRatio: number }[] =
  [];
for (let i = 0; i < ROUNDS; i++) {
  const order = i % 2 === 0 ? [one, many] : [many, one];
  const intro: Record<string, Run> = {};
  for (const d of order) intro[d.name] = await introspect(d, `introspection, ${d.name}, round ${i + 1}`);
  const logins: Record<string, LoginRun> = {};
  for (const d of order) {
    logins[d.name] = await measureLogins(d, loginOpts);
    const r = logins[d.name];
    console.log(`login, ${d.name}, round ${i + 1}: ${r.loginsPerSecond} logins/s, P95 ${r.fullFlowMs.p95} ms`);
  }
  const a = intro[one.name];
  const b = intro[many.name];
  const la = logins[one.name];
  const lb = logins[many.name];
  rounds.push({
    round: i + 1,
    introspect: [a, b],
    login: [la, lb],
    introspectRatio: Math.round((b.requestsPerSec / a.requestsPerSec) * 1000) / 1000,
    loginRatio: Math.round((lb.loginsPerSecond / la.loginsPerSecond) * 1000) / 1000,
  });
}
await one.stop();
await many.stop();
await setup.close();
const loadAfter = loadAverage();

const introspectRatio = median(rounds.map((r) => r.introspectRatio));
const loginRatio = median(rounds.map((r) => r.loginRatio));
const result = {
  bench: 'workers-scaling',
  database: setup.kind,
  workers: [1, N],
  rounds,
  introspectionScaling: introspectRatio,
  loginScaling: loginRatio,
  loadAverage: { before: loadBefore, after: loadAfter },
  machine: machine(),
};
const m = result.machine;
const md = `# Workers scaling (${setup.kind}): IAM_WORKERS=1 against IAM_WORKERS=${N}, same run

${m.at}, ${m.cpus} cores, Node ${m.node}. Load average (1, 5, 15 min) ${loadBefore.join(' ')} before the run
and ${loadAfter.join(' ')} after it: other work shares this machine${
  setup.kind === 'mariadb' ? ', and mariadbd runs on the same two cores as the daemons' : ''
}.

Two daemons side by side over one ${setup.kind === 'mariadb' ? 'MariaDB' : 'SQLite'} database, one with one process \
and one with ${N} worker processes,
loaded in turn, ${ROUNDS} rounds with the order flipped each round: introspection (autocannon,
${args.connections} connections, ${args.duration} s, one cached token) and the whole login flow \
(${CONCURRENCY} virtual users,
${args['login-duration']} s, the sign-in code delivered over SMTP). The scaling ratio is the ${N}-worker rate ÷ the
1-worker rate.

| Round | Introspection req/s, 1 / ${N} workers | P99 ms, 1 / ${N} | ratio | Logins/s, 1 / ${N} workers | \
full-flow P95 ms, 1 / ${N} | ratio |
|---|---|---|---|---|---|---|
${rounds
  .map(
    (r) =>
      `| ${r.round} | ${r.introspect[0].requestsPerSec} / ${r.introspect[1].requestsPerSec} | ` +
      `${r.introspect[0].p99} / ${r.introspect[1].p99} | ${r.introspectRatio}× | ` +
      `${r.login[0].loginsPerSecond} / ${r.login[1].loginsPerSecond} | ` +
      `${r.login[0].fullFlowMs.p95} / ${r.login[1].fullFlowMs.p95} | ${r.loginRatio}× |`,
  )
  .join('\n')}

**Scaling, median of the rounds: introspection ${introspectRatio}×, login ${loginRatio}× (${N} workers ÷ 1).**
Errors: introspection ${rounds.reduce((n, r) => n + r.introspect[0].errors + r.introspect[1].errors, 0)}, \
non-2xx ${rounds.reduce((n, r) => n + r.introspect[0].non2xx + r.introspect[1].non2xx, 0)}; \
failed logins ${rounds.reduce((n, r) => n + r.login[0].failed + r.login[1].failed, 0)}.

Daemon CPU per login (all processes), 1 / ${N} workers, by round: \
${rounds.map((r) => `${r.login.map((l) => l.cpuMsPerLogin?.server ?? '?').join(' / ')} ms`).join('; ')}.
`;
console.log(md);
writeResults(`workers-scaling-${setup.kind}`, result, md);
process.exit(0);
