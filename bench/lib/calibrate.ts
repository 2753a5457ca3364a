/**
 * How fast this machine is right now, against the reference figure for these 2-core machines.
 *
 * The machines are shared virtual machines whose speed changes from hour to hour (the same build
 * of the login bench has given 210 and 315 logins/s minutes apart). So the login bench measures
 * the machine the way the reference figure was measured — a bare node:http server answering a
 * fixed JSON body, loaded by autocannon with 50 connections from another process on the same
 * machine — before and after its own run, and reports its result next to that speed.
 */
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';

/** Requests/s of a bare node:http server on a reference machine of this kind (autocannon, 50 connections). */
export const REFERENCE_BARE_HTTP_RPS = 100_000;

const SERVER = `
const http = require('node:http');
const s = http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end('{"ok":true}');
});
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
`;

/** Mean requests/s of the bare server over `seconds`. */
export async function bareHttpRps(seconds: number): Promise<number> {
  const proc = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      proc.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      proc.once('exit', (code) => reject(new Error(`calibration server exited (${code})`)));
    });
    const r = await autocannon({ url: `http://127.0.0.1:${port}/`, connections: 50, duration: seconds });
    if (r.errors || r.non2xx) throw new Error(`calibration run had ${r.errors} errors and ${r.non2xx} non-2xx answers`);
    return Math.round(r.requests.total / r.duration);
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill();
      await exited;
    }
  }
}
