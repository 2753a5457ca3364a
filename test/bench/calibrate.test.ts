/**
 * The login bench's machine calibration: a real bare node:http server in its own process,
 * loaded by autocannon. Only its shape is asserted (no timing): a positive whole number of
 * requests per second, and the server process gone afterwards.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { bareHttpRps } from '../../bench/lib/calibrate.js';

const calibrationServers = () =>
  execFileSync('ps', ['-eo', 'pid,ppid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes("require('node:http')") && Number(l.trim().split(/\s+/)[1]) === process.pid).length;

test('bareHttpRps measures a real server and stops it', async (t) => {
  const rps = await bareHttpRps(1);
  t.true(Number.isInteger(rps) && rps > 0, `requests/s: ${rps}`);
  t.is(calibrationServers(), 0);
});
