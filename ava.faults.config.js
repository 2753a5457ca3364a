// ava configuration for the faults lane (test/lanes/faults.sh): tests that SIGKILL the daemon in
// the middle of writes and restart it, and (under dist/test/faults/mariadb/) restart the MariaDB
// server under load. The default suite and the MariaDB lane leave this directory out: these
// tests kill processes and need the lane's restartable server. One file at a time, so a kill
// lands while that test's writes, not another test's, keep the two cores busy.
export default {
  files: ['dist/test/faults/**/*.test.js'],
  timeout: '4m',
  workerThreads: false,
  concurrency: 1,
  verbose: true,
};
