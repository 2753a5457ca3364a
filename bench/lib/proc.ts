/**
 * What a server process costs, read from /proc (Linux): CPU time over all its processes and
 * threads, and resident memory. Shared by the login, workers and soak benches.
 */
import { readFileSync } from 'node:fs';

const MS_PER_TICK = 10; // USER_HZ is 100 on Linux

function ticks(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime, stime (proc(5), counting from field 3)
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU time (user + system, ms) of a server: all its processes (a supervisor and its workers
 * with IAM_WORKERS > 1) and their threads, and the main thread of the process that serves
 * requests (the first worker's when there are workers). Divided by the work done it is the
 * cost of one unit, a steadier figure than a rate on a shared machine.
 */
export function cpuMs(pid: number, workers = 1): { all: number; main: number } {
  let all = ticks(`/proc/${pid}/stat`);
  const kids = children(pid);
  for (const child of kids) {
    try {
      all += ticks(`/proc/${child}/stat`);
    } catch {
      /* exited */
    }
  }
  const mainPid = workers > 1 && kids.length ? kids[0] : pid;
  return { all: all * MS_PER_TICK, main: ticks(`/proc/${mainPid}/task/${mainPid}/stat`) * MS_PER_TICK };
}

/** Resident memory of a process and its children, MiB: current (VmRSS) or peak (VmHWM). */
export function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const one = (p: number) => {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${p}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  };
  let total = one(pid);
  for (const c of children(pid)) {
    try {
      total += one(c);
    } catch {
      /* exited */
    }
  }
  return Math.round(total * 10) / 10;
}

/** The 1-, 5- and 15-minute load averages, as `uptime` prints them. */
export function loadAverage(): number[] {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
}
