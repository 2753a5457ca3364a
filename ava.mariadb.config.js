// ava configuration for the MariaDB lane (test/lanes/mariadb.sh runs
// `npx ava --config ava.mariadb.config.js`): the whole default suite against MariaDB, plus
// dist/test/mariadb/**, tests that need a MariaDB server for what they show (row locks held by
// the test, several daemons on one server). The default suite (package.json "ava") leaves that
// directory out, since `npm test` has no server to give them. dist/test/faults/** has a lane of
// its own (test/lanes/faults.sh): it kills daemons and restarts the server. dist/test/galera/**
// needs a cluster: the Galera lane (ava.galera.config.js) runs it.
export default {
  files: ['dist/test/**/*.test.js', '!dist/test/browser/**', '!dist/test/faults/**', '!dist/test/galera/**'],
  timeout: '3m',
  workerThreads: false,
  concurrency: 2,
  verbose: true,
};
