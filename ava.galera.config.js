// ava configuration for the Galera lane (test/lanes/galera.sh runs
// `npx ava --config ava.galera.config.js` with a 3-node cluster up): dist/test/galera/** only.
// One file at a time: a test that kills a node, or times a failover, must not share the cluster
// with another file's load. The default suite (package.json "ava") and the MariaDB lane leave
// that directory out, since they have no cluster to give it.
export default {
  files: ['dist/test/galera/**/*.test.js'],
  timeout: '3m',
  workerThreads: false,
  concurrency: 1,
  verbose: true,
};
