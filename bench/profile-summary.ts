/**
 * Where a daemon's main thread spent its time, from a V8 CPU profile (`--cpu-prof`):
 *
 *   BENCH_DAEMON_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' node dist/bench/login.js --duration 15
 *   node dist/bench/profile-summary.js /tmp/prof/CPU.….cpuprofile [--top 25]
 *
 * Prints the share of the busy (non-idle) samples by package or source directory (the project's
 * own files as `iam:<dir>/<dir>`, node's built-ins by module, native calls by name), then the
 * functions with the most self time. A native call made from JavaScript (a better-sqlite3
 * statement, an fdatasync) is counted where V8 saw it: under the calling function or under the
 * native name. The tables in bench/notes/login-vs-peer.md come from here.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values: args, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' } },
  allowPositionals: true,
});
if (positionals.length !== 1) {
  console.error('usage: node dist/bench/profile-summary.js <file.cpuprofile> [--top 25]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));

/** The bucket a sample's function belongs to. */
function bucketOf(n: ProfileNode): string {
  const { url, functionName } = n.callFrame;
  if (functionName === '(idle)') return '(idle)';
  if (functionName === '(garbage collector)' || functionName === '(program)') return functionName;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const own = /\/dist\/([^/]+\/[^/]+)\//.exec(url);
  if (own) return `iam:${own[1]}`;
  if (url.startsWith('node:')) return url;
  return url || `${functionName} (native)`;
}

const self = new Map<number, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  self.set(id, (self.get(id) ?? 0) + dt);
  total += dt;
});
const buckets = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const b = bucketOf(n);
  buckets.set(b, (buckets.get(b) ?? 0) + us);
  const where = n.callFrame.url.replace(/.*\/(node_modules|dist)\//, '');
  const f = `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}`;
  functions.set(f, (functions.get(f) ?? 0) + us);
}
const idle = buckets.get('(idle)') ?? 0;
const busy = total - idle;
const pct = (us: number) => `${((100 * us) / busy).toFixed(1)} %`;
const top = Number(args.top);

console.log(
  `${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (${((100 * busy) / total).toFixed(0)} %)\n`,
);
console.log('| Share of busy time | Package or directory |\n|---|---|');
for (const [b, us] of [...buckets]
  .filter(([b]) => b !== '(idle)')
  .sort((x, y) => y[1] - x[1])
  .slice(0, top))
  console.log(`| ${pct(us)} | ${b} |`);
console.log('\n| Self time | Function |\n|---|---|');
for (const [f, us] of [...functions]
  .filter(([f]) => !f.startsWith('(idle)'))
  .sort((x, y) => y[1] - x[1])
  .slice(0, top))
  console.log(`| ${pct(us)} | ${f} |`);
