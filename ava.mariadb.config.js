// ava configuration for the MariaDB lane (test/lanes/mariadb.sh runs
// `npx ava --config ava.mariadb.config.js`): the default suite against MariaDB, plus
// dist/test/mariadb/**, tests that need a MariaDB server for what they show (row locks held by
// the test, several daemons on one server). The default suite (package.json "ava") leaves that
// directory out, since `npm test` has no server to give them. dist/test/faults/** has a lane of
// its own (test/lanes/faults.sh): it kills daemons and restarts the server. dist/test/galera/**
// needs a cluster: the Galera lane (ava.galera.config.js) runs it.
//
// Left out here, because running them again on MariaDB would test nothing new (they run in
// `npm test`; docs/architecture.md, "Start-up and CI"):
// - files that never open the service's database (rules, parsers, crypto, outbound HTTP, the
//   bench's helpers) or test SQLite itself (group commit, query plans): NO_DATABASE below. Each was run with
//   IAM_TEST_DATABASE_URL naming a server that does not exist, and passed.
// - the CLI's own files (flags, output, prompts, exit codes): its commands call the services
//   whose SQL the service and HTTP tests run here. Kept: test/cli/cli.test.js (`db migrate`,
//   create and list on MariaDB), persistence (what a command writes survives), users-import
//   (import's transactional batches, and a SIGKILL mid-import, on MariaDB).
// - test/examples/ (the example apps run against a daemon): the apps speak only HTTP, and the
//   login, token and introspection paths they go through run on MariaDB in test/oauth/.
// - test/console/ (the operator console's pages): views over the services the admin API uses,
//   whose SQL the admin tests run here. Kept: console/operators.test.js (two administrators
//   removing each other at once: the role row's lock, FOR UPDATE on MariaDB).
const NO_DATABASE = [
  'architecture',
  'ci/container',
  'ci/licenses',
  'bench/calibrate',
  'bench/http-client',
  'cimd/rules',
  'helpers/smtp-sink',
  'agents/narrowing',
  'daemon/openapi-document',
  'daemon/route-declarations',
  'federation/metadata-verify',
  'federation/resolution',
  'federation/trust-source-rules',
  'shared/crypto',
  'shared/failure',
  'shared/i18n-catalogues',
  'shared/introspection-cache',
  'shared/jcs',
  'shared/outbound',
  'shared/rbac-query-plans',
  'shared/secret-key-race',
  'shared/sqlite-group-commit',
  'shared/typeorm-statements',
  'token-exchange/config',
  'token-exchange/issuer-keys',
  'token-exchange/ssrf',
  'upstream/client',
  'upstream/sealing',
];
const CLI_KEPT = ['cli', 'persistence', 'users-import'];
const CONSOLE_KEPT = ['operators'];

export default {
  files: [
    'dist/test/**/*.test.js',
    '!dist/test/browser/**',
    '!dist/test/faults/**',
    '!dist/test/galera/**',
    ...NO_DATABASE.map((f) => `!dist/test/${f}.test.js`),
    '!dist/test/cli/**',
    '!dist/test/examples/**',
    ...CLI_KEPT.map((f) => `dist/test/cli/${f}.test.js`),
    '!dist/test/console/**',
    ...CONSOLE_KEPT.map((f) => `dist/test/console/${f}.test.js`),
  ],
  timeout: '3m',
  workerThreads: false,
  concurrency: 2,
  verbose: true,
};
