#!/usr/bin/env bash
# Browser test lane: drives the server-rendered login pages with a real headless Chromium
# (Debian's `chromium` package, through playwright-core; never `playwright install`).
#
#   npm run test:browser                                          # all of test/browser/
#   npm run test:browser -- dist/test/browser/login.test.js      # extra args go to ava
#   npm run test:browser -- --match '*wrong code*'
#
# What it does:
#   1. Installs Debian's chromium with apt-get, only if /usr/bin/chromium is missing
#      (apt-get update only then; as root, or through sudo). Likewise nginx and openssl, for
#      test/browser/reverse-proxy.test.ts (the deploy/nginx example run for real; it starts its
#      own nginx in a temp directory). On a host with systemd, installing the nginx package
#      also starts Debian's default site on port 80; the tests do not need it.
#   2. `npm run build` (skip with BROWSER_LANE_SKIP_BUILD=1).
#   3. Runs `npx ava --config ava.browser.config.js`, which selects only
#      dist/test/browser/**/*.test.js (the default `npx ava` / `npm test` excludes them),
#      and exits with ava's exit code.
#
# Screenshots land in test/artifacts/ (git-ignored).
#
# Environment knobs:
#   BROWSER_LANE_SKIP_BUILD=1   Do not run `npm run build` first.
#   IAM_TEST_CHROMIUM           Another Chromium binary for the tests (default /usr/bin/chromium;
#                               the install step still only looks at /usr/bin/chromium).
set -euo pipefail

log() { printf '[browser-lane] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=test/lanes/apt.sh
source "$ROOT/test/lanes/apt.sh"
cd "$ROOT"

CHROMIUM=/usr/bin/chromium
LANE_START=$SECONDS

# Turn signals into an exit with the conventional 128+n status (ava stops its workers, and
# each test closes its browser and daemon in its teardown).
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- 1. make sure Chromium is installed ----------------------------------------------------
if [ ! -x "$CHROMIUM" ]; then
  apt_install "$CHROMIUM" chromium
  [ -x "$CHROMIUM" ] || die "chromium installed but $CHROMIUM is still missing"
fi
log "using $("$CHROMIUM" --version 2>/dev/null | head -n1 || echo "$CHROMIUM")"

# --- 1b. nginx and openssl for the reverse-proxy example -----------------------------------
NGINX=/usr/sbin/nginx
missing=()
[ -x "$NGINX" ] || missing+=(nginx)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[*]}" "${missing[@]}"
  [ -x "$NGINX" ] || die "nginx installed but $NGINX is still missing"
fi

# --- 2. build ------------------------------------------------------------------------------
if [ "${BROWSER_LANE_SKIP_BUILD:-0}" != 1 ]; then
  log "building (npm run build)"
  npm run build --silent
fi

# --- 3. run the browser tests --------------------------------------------------------------
mkdir -p test/artifacts
rc=0
log "running: npx ava --config ava.browser.config.js $*"
npx ava --config ava.browser.config.js "$@" || rc=$?
log "ava exited with $rc after $((SECONDS - LANE_START))s; screenshots in test/artifacts/"
exit "$rc"
