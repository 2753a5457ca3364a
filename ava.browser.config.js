// ava configuration for the browser lane only (test/lanes/browser.sh runs
// `npx ava --config ava.browser.config.js`). With an explicit --config, ava ignores the "ava"
// section of package.json, whose `files` excludes dist/test/browser/** so that plain `npx ava`
// and `npm test` (which need nothing beyond npm ci) never start a browser.
export default {
  files: ['dist/test/browser/**/*.test.js'],
  timeout: '3m',
  workerThreads: false,
  concurrency: 1, // one Chromium at a time on these 2-core machines
  verbose: true,
};
