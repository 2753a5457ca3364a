#!/usr/bin/env bash
# MariaDB test lane: runs the compiled ava suite against a throwaway MariaDB server.
#
#   npm run test:mariadb                              # whole suite
#   npm run test:mariadb -- dist/test/foo.test.js     # extra args go to ava
#
# What it does:
#   1. `npm run build` (skip with MARIADB_LANE_SKIP_BUILD=1).
#   2. Installs mariadb-server with apt-get, only if `mariadbd` is missing.
#   3. Starts a private mariadbd on 127.0.0.1 at a random free port, with its data directory,
#      socket, pid file and error log in a mktemp directory. Nothing else on the machine is
#      touched, and a MariaDB/MySQL already running on 3306 does not matter.
#   4. Creates user 'iam'@'127.0.0.1' with a random password and ALL privileges on *.* (each
#      test creates and drops its own database `iamt_<hex>`, see test/helpers/db.ts), and a
#      database `iam`.
#   5. Exports IAM_TEST_DATABASE_URL=mysql://iam:<pw>@127.0.0.1:<port>/iam and runs ava with
#      ava.mariadb.config.js (the default suite plus dist/test/mariadb/**),
#      exiting with ava's exit code (MARIADB_LANE_AVA_CONFIG names another ava config; the
#      faults lane, test/lanes/faults.sh, uses ava.faults.config.js).
#   6. On any exit (success, failure, Ctrl-C, SIGTERM) stops the server and deletes the
#      temporary directory.
#
# Environment knobs:
#   MARIADB_LANE_CMD        Run this shell command (via `bash -c`) instead of ava, with the
#                           same environment; extra script args become its "$@". Useful to poke
#                           at the server or run a daemon against it, e.g.
#                             MARIADB_LANE_SKIP_BUILD=1 MARIADB_LANE_CMD='mariadb --no-defaults \
#                               -h127.0.0.1 -P"$MARIADB_LANE_PORT" -uiam -p"$MARIADB_LANE_PASSWORD" \
#                               -e "select version()"' bash test/lanes/mariadb.sh
#                             MARIADB_LANE_CMD='IAM_DATABASE_URL=$IAM_TEST_DATABASE_URL \
#                               IAM_DATA_DIR=$(mktemp -d) node dist/daemon/main.js' npm run test:mariadb
#                           The command also sees MARIADB_LANE_HOST, MARIADB_LANE_PORT,
#                           MARIADB_LANE_USER, MARIADB_LANE_PASSWORD and MARIADB_LANE_SOCKET
#                           (root@localhost without password over that socket), and
#                           MARIADB_LANE_RESTART: a script that restarts the server in place
#                           (same port, datadir and socket) and returns once it answers again;
#                           `"$MARIADB_LANE_RESTART" 3` stays down 3 s in between. The fault
#                           tests (test/faults/) use it to restart the database under load.
#   MARIADB_LANE_AVA_CONFIG     Run ava with this config file instead of ava.mariadb.config.js.
#   MARIADB_LANE_SKIP_BUILD=1   Do not run `npm run build` first.
#   MARIADB_LANE_KEEP=1         Keep the temp dir (data and err.log) after exit, for debugging.
#                               The server is still stopped.
set -euo pipefail

log() { printf '[mariadb-lane] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=test/lanes/apt.sh
source "$ROOT/test/lanes/apt.sh"
# shellcheck source=test/lanes/mysqld.sh
source "$ROOT/test/lanes/mysqld.sh"
cd "$ROOT"

TMP=""
SERVER_PID=""

# shellcheck disable=SC2317 # (runs from the EXIT trap)
stop_server() {
  # After a MARIADB_LANE_RESTART the server running is the one its pid file names.
  if [ -n "$TMP" ] && [ -s "$TMP/mariadbd.pid" ] && { [ -z "$SERVER_PID" ] || ! kill -0 "$SERVER_PID" 2>/dev/null; }; then
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID="$(cat "$TMP/mariadbd.pid" 2>/dev/null || true)"
  fi
  [ -n "$SERVER_PID" ] || return 0
  log "stopping mariadbd (pid $SERVER_PID)"
  stop_pid "$SERVER_PID" 30
  SERVER_PID=""
}

# shellcheck disable=SC2317 # (the EXIT trap)
cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM HUP
  stop_server
  if [ -n "$TMP" ] && [ -d "$TMP" ]; then
    if [ "${MARIADB_LANE_KEEP:-0}" = 1 ]; then
      log "keeping $TMP (MARIADB_LANE_KEEP=1)"
    else
      rm -rf -- "$TMP"
      log "removed $TMP"
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
# Turn signals into an exit so the EXIT trap runs, with the conventional 128+n status.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- 1. build ------------------------------------------------------------------------------
if [ "${MARIADB_LANE_SKIP_BUILD:-0}" != 1 ]; then
  log "building (npm run build)"
  npm run build --silent
fi

# --- 2. make sure MariaDB is installed -----------------------------------------------------
ensure_mariadbd
INSTALL_DB="$(first_cmd mariadb-install-db mysql_install_db)" || die "mariadb-install-db not found"
CLIENT="$(first_cmd mariadb mysql)" || die "mariadb client not found"
log "using $(mariadbd --version 2>/dev/null | head -n1)"

# --- 3. start a private server -------------------------------------------------------------
TMP="$(mktemp -d "${TMPDIR:-/tmp}/iam-mariadb.XXXXXX")"
DATA="$TMP/data"
SOCK="$TMP/sock"
ERRLOG="$TMP/err.log"
log "temp dir $TMP"

USER_OPT=()
if [ "$(id -u)" -eq 0 ]; then
  USER_OPT=(--user=root) # mariadbd refuses to run as root without it
fi

log "initialising data directory"
if ! "$INSTALL_DB" --no-defaults --datadir="$DATA" --auth-root-authentication-method=normal \
  --skip-test-db ${USER_OPT[@]+"${USER_OPT[@]}"} >"$TMP/install-db.log" 2>&1; then
  tail -n 40 "$TMP/install-db.log" >&2 || true
  die "$INSTALL_DB failed"
fi

root_sql() { "$CLIENT" --no-defaults --protocol=socket -S "$SOCK" -uroot "$@"; }

# Starts mariadbd on $PORT and waits up to 30 s. Returns 0 when it answers, 2 when the port was
# taken in the meantime (caller retries with another), 1 on any other failure.
server_args() { # the mariadbd command line, one word a line (the restart script reuses it)
  printf '%s\n' "$(command -v mariadbd)" --no-defaults \
    --datadir="$DATA" --socket="$SOCK" --pid-file="$TMP/mariadbd.pid" --log-error="$ERRLOG" \
    --port="$PORT" --bind-address=127.0.0.1 --skip-name-resolve \
    ${USER_OPT[@]+"${USER_OPT[@]}"} \
    --character-set-server=utf8mb4 --max-connections=500 \
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --sync-binlog=0 \
    --innodb-flush-method=nosync --innodb-file-per-table=0
  # (nosync and one shared tablespace: each test migrates a fresh database, about 170 DDL
  # statements, and a throwaway server needs neither an fsync nor a file per table for them;
  # a restart through MARIADB_LANE_RESTART is a clean shutdown, which still writes everything.)
}

start_server() {
  : >"$ERRLOG"
  local args
  mapfile -t args < <(server_args)
  "${args[@]}" </dev/null >>"$ERRLOG" 2>&1 &
  SERVER_PID=$!
  local i
  for ((i = 0; i < 300; i++)); do # 300 x 0.1 s = 30 s
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      wait "$SERVER_PID" 2>/dev/null || true
      SERVER_PID=""
      if grep -qiE 'address already in use|bind on tcp/ip port' "$ERRLOG"; then return 2; fi
      return 1
    fi
    if root_sql -e 'select 1' >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

attempt=1
while :; do
  PORT="$(free_port)"
  log "starting mariadbd on 127.0.0.1:$PORT (attempt $attempt)"
  status=0
  start_server || status=$?
  [ "$status" -eq 0 ] && break
  if [ "$status" -eq 2 ] && [ "$attempt" -lt 3 ]; then
    log "port $PORT was taken meanwhile; retrying with another"
    attempt=$((attempt + 1))
    continue
  fi
  log "mariadbd failed to start (it exited, or did not answer within 30 s); last lines of $ERRLOG:"
  tail -n 40 "$ERRLOG" >&2 || true
  exit 1
done
log "mariadbd is up (pid $SERVER_PID)"

# --- 4. user and database ------------------------------------------------------------------
PASSWORD="$(node -e "console.log(require('crypto').randomBytes(18).toString('hex'))")"
root_sql <<SQL
CREATE USER 'iam'@'127.0.0.1' IDENTIFIED BY '$PASSWORD';
GRANT ALL PRIVILEGES ON *.* TO 'iam'@'127.0.0.1';
CREATE DATABASE iam CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
FLUSH PRIVILEGES;
SQL
log "created user 'iam'@'127.0.0.1' (ALL on *.*) and database iam"

# The restart hook: stop the server cleanly (connections in use get an error, as in a real
# restart), stay down "$1" seconds (default 0), start it again with the same command line and
# wait until it answers. It reads the pid from the pid file, so it works more than once.
{
  printf '#!/usr/bin/env bash\nset -euo pipefail\n'
  printf 'ARGS=('
  server_args | while IFS= read -r a; do printf '%q ' "$a"; done
  printf ')\n'
  printf 'PIDFILE=%q\nCLIENT=%q\nSOCK=%q\nERRLOG=%q\n' "$TMP/mariadbd.pid" "$CLIENT" "$SOCK" "$ERRLOG"
  cat <<'SCRIPT'
pid="$(cat "$PIDFILE")"
kill -TERM "$pid"
for ((i = 0; i < 600; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && { echo "mariadbd $pid did not stop in 60 s" >&2; exit 1; }
sleep "${1:-0}"
setsid "${ARGS[@]}" </dev/null >>"$ERRLOG" 2>&1 &
for ((i = 0; i < 600; i++)); do
  "$CLIENT" --no-defaults --protocol=socket -S "$SOCK" -uroot -e 'select 1' >/dev/null 2>&1 && exit 0
  sleep 0.1
done
echo "mariadbd did not answer within 60 s of its restart" >&2
exit 1
SCRIPT
} >"$TMP/restart"
chmod +x "$TMP/restart"
export MARIADB_LANE_RESTART="$TMP/restart"

export IAM_TEST_DATABASE_URL="mysql://iam:$PASSWORD@127.0.0.1:$PORT/iam"
export MARIADB_LANE_HOST=127.0.0.1 MARIADB_LANE_PORT="$PORT" MARIADB_LANE_USER=iam
export MARIADB_LANE_PASSWORD="$PASSWORD" MARIADB_LANE_SOCKET="$SOCK"
log "IAM_TEST_DATABASE_URL=mysql://iam:***@127.0.0.1:$PORT/iam"

# --- 5. run the suite (or MARIADB_LANE_CMD) ------------------------------------------------
rc=0
if [ -n "${MARIADB_LANE_CMD:-}" ]; then
  log "running MARIADB_LANE_CMD: $MARIADB_LANE_CMD"
  bash -c "$MARIADB_LANE_CMD" mariadb-lane "$@" || rc=$?
  log "MARIADB_LANE_CMD exited with $rc"
else
  AVA_CONFIG="${MARIADB_LANE_AVA_CONFIG:-ava.mariadb.config.js}"
  log "running: npx ava --config $AVA_CONFIG $*"
  npx ava --config "$AVA_CONFIG" "$@" || rc=$?
  log "ava exited with $rc"
fi
exit "$rc"
