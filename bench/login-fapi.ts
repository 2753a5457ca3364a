/**
 * The FAPI 2.0 login benchmark (`npm run bench:login:fapi`): the login benchmark's same-run
 * comparison with node-oidc-provider (bench/login.ts --peer), with the flow FAPI 2.0's Security
 * Profile makes of it on both sides. Per login:
 *
 *   - a pushed authorization request (RFC 9126) authenticated with private_key_jwt (RFC 7523),
 *   - `/authorize` with only `client_id` and the `request_uri`,
 *   - the sign-in, as each server's plain login bench signs in (ours: the email code over real
 *     SMTP; the peer: its login and consent forms),
 *   - the code at the token endpoint with private_key_jwt and a DPoP proof (RFC 9449), the
 *     access token DPoP-bound.
 *
 * node-oidc-provider runs with its `fapi` feature (profile '2.0'), PAR required and DPoP
 * required for the client (bench/oidc-provider-fapi-peer.ts). This service runs without a
 * profile switch (being built apart): the client is required to push
 * (`require_pushed_authorization_requests`) and the tenant's DPoP policy requires a proof at
 * every token request, so each login does the work the profile would ask for.
 *
 *   node dist/bench/login-fapi.js [--rounds 4] [--duration 15] [--warmup 5] [--concurrency 24] [--calibrate 10]
 *                                 [--synchronous FULL|NORMAL]
 *
 * The load loop, statistics and alternation (A B, B A, …) are the plain bench's
 * (bench/lib/login-driver.ts). Results: bench/results/login-fapi-vs-peer.{json,md}.
 */
import { parseArgs } from 'node:util';
import { bareHttpRps, REFERENCE_BARE_HTTP_RPS } from './lib/calibrate.js';
import { fapiClientKey } from './lib/fapi-client.js';
import { alternate, measureLogins } from './lib/login-driver.js';
import { prepareOurLogin } from './lib/our-login.js';
import { loadAverage } from './lib/proc.js';
import { peerRatios, peerTables } from './lib/peer-report.js';
import { machine, writeResults } from './lib/stats.js';
import { startPeerLogin } from './login-peer.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '24' },
    calibrate: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '4' },
    synchronous: { type: 'string', default: 'FULL' },
  },
});
const CONCURRENCY = Number(args.concurrency);
const CALIBRATE_S = Number(args.calibrate);
const ROUNDS = Number(args.rounds);
const runOpts = {
  concurrency: CONCURRENCY,
  warmupSeconds: Number(args.warmup),
  durationSeconds: Number(args.duration),
};

// One client key pair for both servers: each registers its public half.
const key = await fapiClientKey();
const setup = await prepareOurLogin({ concurrency: CONCURRENCY, fapi: key });
const kind = setup.kind;
const loadBefore = loadAverage();
const speedBefore = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;
const ours = await setup.start({
  name: `iam (${kind}, PAR + DPoP)`,
  synchronous: args.synchronous,
  // e.g. BENCH_DAEMON_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
  nodeArgs: (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean),
});
const peer = await startPeerLogin(CONCURRENCY, { fapi: key });
console.log(
  `FAPI login vs node-oidc-provider: ${kind}, ${CONCURRENCY} virtual users each, ${ROUNDS} rounds of ` +
    `${runOpts.durationSeconds} s (warm-up ${runOpts.warmupSeconds} s each)`,
);
// Unrecorded first, so that neither is measured while its JIT compiler is still at work.
const warm = { ...runOpts, warmupSeconds: 0, durationSeconds: runOpts.warmupSeconds };
await measureLogins(ours, warm);
await measureLogins(peer, warm);
const out = await alternate(ours, peer, ROUNDS, runOpts);
await ours.stop();
await peer.stop();
const mailsReceived = setup.mailsReceived();
await setup.close();
const speedAfter = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;
const loadAfter = loadAverage();

const ratios = peerRatios(out);
const result = {
  bench: 'login-fapi-vs-peer',
  database: kind,
  sqliteSynchronous: kind === 'sqlite' ? args.synchronous : null,
  concurrency: CONCURRENCY,
  workers: 1,
  flow: 'PAR (private_key_jwt) + authorize with request_uri + sign-in + token (private_key_jwt, DPoP)',
  ours: 'no FAPI profile switch: require_pushed_authorization_requests on the client, requireDpop on the tenant',
  peer: "node-oidc-provider: features.fapi profile '2.0', PAR required, dpop_bound_access_tokens",
  rounds: out,
  ...ratios,
  mailsReceived,
  goal: { loginsPerSecondRatio: 1, fullFlowP95Ratio: 1 },
  loadAverage: { before: loadBefore, after: loadAfter },
  machineSpeed: { bareHttpRequestsPerSecond: { before: speedBefore, after: speedAfter } },
  machine: machine(),
};

const md = `# FAPI 2.0 login flow (PAR + DPoP) against node-oidc-provider (${kind}, same run)

${result.machine.at}, ${result.machine.cpus} cores, Node ${result.machine.node}. Load average (1, 5, 15 min)
${loadBefore.join(' ')} before the run and ${loadAfter.join(' ')} after it: other work shares this machine, so the
absolute figures are low and noisy and the same-run ratios are what compare the two servers.
${
  speedBefore !== undefined
    ? `A bare node:http server answered ${speedBefore} requests/s before the run and ${speedAfter} after it
(autocannon, 50 connections; about ${REFERENCE_BARE_HTTP_RPS.toLocaleString('en')} on the reference machine).\n`
    : ''
}
Both servers run side by side, each one process, and are loaded in turn by the same closed loop
(bench/lib/login-driver.ts) with ${CONCURRENCY} virtual users for ${runOpts.durationSeconds} s after a \
${runOpts.warmupSeconds} s warm-up, ${ROUNDS} rounds alternating A B, B A, …
Each login, on both sides (bench/lib/fapi-client.ts makes the same JWTs for both): a pushed
authorization request with a private_key_jwt client assertion (ES256), \`/authorize\` with only
\`client_id\` and the \`request_uri\`, the sign-in, and the code at the token endpoint with a new
client assertion and a DPoP proof (ES256, one key per virtual user); the access token comes back
DPoP-bound (\`token_type\` DPoP) or the login counts as failed.

- **iam**: SQLite (IAM_SQLITE_SYNCHRONOUS=${args.synchronous}), IAM_WORKERS=1, **without the FAPI
  profile switch** (built apart): the client is registered with
  \`require_pushed_authorization_requests\` and its tenant's DPoP policy has \`requireDpop\`, so
  every login does the work the profile asks for (push, private_key_jwt, PKCE S256, DPoP-bound
  token). Six requests: push, authorize page, send code, verify code, authorize with the
  session, token; the code delivered over real SMTP to a local SMTP server. The push's
  \`request_uri\`, the client assertions' and the DPoP proofs' \`jti\` are all spent in the
  database (shared by daemons).
- **node-oidc-provider** 9.13 (bench/login-peer.ts, bench/oidc-provider-fapi-peer.ts) with its
  \`fapi\` feature at profile '2.0', \`pushedAuthorizationRequests\` required, \`dPoP\` on and
  \`dpop_bound_access_tokens\` for the client: its own flow through its interaction API, nine
  requests (push, authorize, login form, login POST, resume, consent form, consent POST saving a
  Grant, resume to the callback, token), a fresh cookie jar per login; its **in-memory
  adapter** (no database, no mail; replay checks in process memory).

${peerTables(out, ratios)}`;
console.log(md);
writeResults('login-fapi-vs-peer', result, md);
process.exit(0);
