#!/usr/bin/env bash
# Fault-injection lane: the daemon killed (SIGKILL) in the middle of each kind of write, and the
# MariaDB server restarted under load (test/faults/, ava.faults.config.js).
#
#   npm run test:faults                  # both passes
#   FAULTS_LANE_ONLY=sqlite npm run test:faults   # or mariadb: one pass only
#
# What it does:
#   1. `npm run build` (skip with FAULTS_LANE_SKIP_BUILD=1).
#   2. SQLite pass: the SIGKILL tests (dist/test/faults/*.test.js) on embedded SQLite.
#   3. MariaDB pass: through test/lanes/mariadb.sh (its throwaway server, and its restart hook
#      MARIADB_LANE_RESTART): the SIGKILL tests again, and dist/test/faults/mariadb/, which
#      restarts that server under load.
# Exits non-zero if either pass fails (both run).
set -euo pipefail

log() { printf '[faults-lane] %s\n' "$*" >&2; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
LANE_START=$SECONDS

trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

if [ "${FAULTS_LANE_SKIP_BUILD:-0}" != 1 ]; then
  log "building (npm run build)"
  npm run build --silent
fi

ONLY="${FAULTS_LANE_ONLY:-}"
rc=0
# Both passes' output, to print one total at the end (.ci/run reads the last "N tests passed").
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
if [ -z "$ONLY" ] || [ "$ONLY" = sqlite ]; then
  log "SQLite pass"
  # IAM_TEST_DATABASE_URL from the caller's environment would turn this pass into a MySQL one.
  # Without arguments, the SIGKILL tests: dist/test/faults/mariadb/ needs the lane's server.
  if [ "$#" -eq 0 ]; then set -- 'dist/test/faults/*.test.js'; fi
  env -u IAM_TEST_DATABASE_URL npx ava --config ava.faults.config.js "$@" 2>&1 | tee -a "$OUT" || rc=$?
  if [ "$1" = 'dist/test/faults/*.test.js' ]; then shift; fi
  log "SQLite pass exited with $rc after $((SECONDS - LANE_START)) s"
fi
if [ -z "$ONLY" ] || [ "$ONLY" = mariadb ]; then
  log "MariaDB pass"
  m=0
  MARIADB_LANE_SKIP_BUILD=1 MARIADB_LANE_AVA_CONFIG=ava.faults.config.js bash test/lanes/mariadb.sh "$@" 2>&1 |
    tee -a "$OUT" || m=$?
  log "MariaDB pass exited with $m"
  [ "$m" -eq 0 ] || rc=$m
fi
total() { { grep -Eo "^ *[0-9]+ tests? $1" "$OUT" || true; } | awk '{ n += $1 } END { print n + 0 }'; }
passed="$(total passed)"
failed="$(total failed)"
log "faults lane done in $((SECONDS - LANE_START)) s, exit $rc"
plural() { [ "$1" -eq 1 ] && echo test || echo tests; }
printf '\n  %d %s passed (both passes)\n' "$passed" "$(plural "$passed")"
[ "$failed" -eq 0 ] || printf '  %d %s failed (both passes)\n' "$failed" "$(plural "$failed")"
exit "$rc"
