#!/usr/bin/env bash
# Galera test lane: a throwaway 3-node MariaDB Galera cluster on loopback, and the tests under
# dist/test/galera/ against it.
#
#   npm run test:galera                                        # all of test/galera/
#   npm run test:galera -- dist/test/galera/failover.test.js   # extra args go to ava
#
# What it does:
#   1. `npm run build` (skip with GALERA_LANE_SKIP_BUILD=1).
#   2. Installs mariadb-server, galera-4 and rsync (the state transfer method) with apt-get,
#      only those that are missing.
#   3. Writes one config per node into a mktemp directory: its own data directory, socket, client
#      port, group communication port, IST port and SST port (random free ports on 127.0.0.1),
#      wsrep_cluster_address listing all three. Node 1 bootstraps the cluster
#      (--wsrep-new-cluster); nodes 2 and 3 join it with a full state transfer (rsync) from an
#      empty data directory. Each start waits until the node is Synced.
#   4. Creates user 'iam'@'127.0.0.1' (random password, ALL on *.*; replicated to every node) and
#      a database `iam`.
#   5. Exports to the tests
#        IAM_GALERA_URLS       the three nodes' mysql:// URLs (database iam), comma-separated
#        IAM_GALERA_CTL        a command to control the nodes: `$IAM_GALERA_CTL kill 2`,
#                              `start 2` (waits for Synced), `stop 2`, `status`, `sql 1 -e ...`
#                              (see test/lanes/galera-ctl.sh)
#        IAM_TEST_DATABASE_URL node 1's URL, so test/helpers/db.ts creates test databases there
#      and runs ava with ava.galera.config.js (dist/test/galera/** only, one file at a time:
#      a test that kills a node must not pull it from under another file's test).
#   6. On any exit (success, failure, Ctrl-C, SIGTERM) stops every node and deletes the temp
#      directory; on failure it prints the last lines of each node's error log first.
#
# Environment knobs:
#   GALERA_LANE_SKIP_BUILD=1   Do not run `npm run build` first.
#   GALERA_LANE_KEEP=1         Keep the temp dir (data and logs) after exit. Nodes still stop.
#   GALERA_LANE_CMD            Run this shell command (bash -c) instead of ava, with the same
#                              environment; extra script args become its "$@", e.g.
#                                GALERA_LANE_CMD='$IAM_GALERA_CTL status' npm run test:galera
set -euo pipefail

log() { printf '[galera-lane %s] %s\n' "$(date -u +%T.%2N)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=test/lanes/apt.sh
source "$ROOT/test/lanes/apt.sh"
# shellcheck source=test/lanes/mysqld.sh
source "$ROOT/test/lanes/mysqld.sh"
cd "$ROOT"

NODES=3
PROVIDER=/usr/lib/galera/libgalera_smm.so
CTL_SCRIPT="$ROOT/test/lanes/galera-ctl.sh"
LANE_START=$SECONDS
TMP=""
CHILD_PID=""

ctl() { bash "$CTL_SCRIPT" "$TMP" "$@"; }

# shellcheck disable=SC2317 # (the EXIT trap)
cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM HUP
  if [ -n "$CHILD_PID" ]; then
    # The whole process group: ava, its workers and the daemons the tests started.
    log "stopping the tests (process group $CHILD_PID)"
    kill -TERM -- "-$CHILD_PID" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do
      kill -0 -- "-$CHILD_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$CHILD_PID" 2>/dev/null || true
  fi
  if [ -n "$TMP" ] && [ -f "$TMP/nodes" ]; then
    if [ "$rc" -ne 0 ]; then
      local n
      for ((n = 1; n <= NODES; n++)); do
        [ -f "$TMP/node$n/err.log" ] || continue
        log "last lines of node $n's error log:"
        tail -n 25 "$TMP/node$n/err.log" >&2
      done
    fi
    ctl stop-all
  fi
  if [ -n "$TMP" ] && [ -d "$TMP" ]; then
    if [ "${GALERA_LANE_KEEP:-0}" = 1 ]; then
      log "keeping $TMP (GALERA_LANE_KEEP=1)"
    else
      rm -rf -- "$TMP"
      log "removed $TMP"
    fi
  fi
  log "lane finished with $rc after $((SECONDS - LANE_START)) s"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- 1. build ------------------------------------------------------------------------------
if [ "${GALERA_LANE_SKIP_BUILD:-0}" != 1 ]; then
  log "building (npm run build)"
  npm run build --silent
fi

# --- 2. packages ---------------------------------------------------------------------------
ensure_mariadbd
[ -f "$PROVIDER" ] || apt_install "$PROVIDER" galera-4
[ -f "$PROVIDER" ] || die "galera-4 installed but $PROVIDER is still missing"
command -v rsync >/dev/null 2>&1 || apt_install rsync rsync
INSTALL_DB="$(first_cmd mariadb-install-db mysql_install_db)" || die "mariadb-install-db not found"
CLIENT="$(first_cmd mariadb mysql)" || die "mariadb client not found"
log "using $(mariadbd --version 2>/dev/null | head -n1)"

# --- 3. node configs -----------------------------------------------------------------------
TMP="$(mktemp -d "${TMPDIR:-/tmp}/iam-galera.XXXXXX")"
log "temp dir $TMP"
command -v "$CLIENT" >"$TMP/client"

free_ports() { # N distinct ports, all held open together while they are picked
  node -e "
    const net = require('net'); const n = Number(process.argv[1]); const servers = [];
    const next = () => { if (servers.length === n) { console.log(servers.map((s) => s.address().port).join(' ')); servers.forEach((s) => s.close()); return; }
      const s = net.createServer(); s.listen(0, '127.0.0.1', () => { servers.push(s); next(); }); };
    next();" "$1"
}

# As root the nodes run as Debian's `mysql` user, not as root: the rsync state transfer starts
# an rsync daemon on the joiner, which as root writes as `nobody` and so cannot fill a
# root-owned data directory.
USER_LINE=""
if [ "$(id -u)" -eq 0 ]; then
  id mysql >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin mysql
  USER_LINE="user=mysql"
  chmod 755 "$TMP"
fi

write_configs() {
  local ports n d gaddr=""
  read -r -a ports <<<"$(free_ports $((NODES * 4)))"
  for ((n = 1; n <= NODES; n++)); do
    gaddr+="${gaddr:+,}127.0.0.1:${ports[(n - 1) * 4 + 1]}"
  done
  for ((n = 1; n <= NODES; n++)); do
    d="$TMP/node$n"
    mkdir -p "$d/data"
    local port="${ports[(n - 1) * 4]}" gport="${ports[(n - 1) * 4 + 1]}"
    local ist="${ports[(n - 1) * 4 + 2]}" sst="${ports[(n - 1) * 4 + 3]}"
    echo "$port" >"$d/port"
    # evs.*: a killed node is declared dead after 2 s of silence instead of the default 5 s
    # (suspect) and 15 s (inactive); until then the survivors hold commits, since they cannot
    # tell a dead peer from a slow one. Loopback never has slow links, so shorter is safe here.
    cat >"$d/my.cnf" <<CNF
[mariadbd]
$USER_LINE
datadir=$d/data
socket=$d/sock
pid-file=$d/mariadbd.pid
log-error=$d/err.log
port=$port
bind-address=127.0.0.1
skip-name-resolve
character-set-server=utf8mb4
max-connections=500
innodb-buffer-pool-size=128M
innodb-log-file-size=48M
innodb-flush-log-at-trx-commit=0
innodb-doublewrite=0
# Galera's requirements
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
wsrep_on=ON
wsrep_provider=$PROVIDER
wsrep_cluster_name=iam-galera-lane
wsrep_cluster_address=gcomm://$gaddr
wsrep_node_name=node$n
wsrep_node_address=127.0.0.1:$gport
wsrep_node_incoming_address=127.0.0.1:$port
wsrep_provider_options="base_port=$gport;gmcast.listen_addr=tcp://127.0.0.1:$gport;ist.recv_addr=127.0.0.1:$ist;gcache.size=64M;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT3S;evs.inactive_check_period=PT0.5S;evs.keepalive_period=PT0.5S"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$sst
wsrep_slave_threads=2
CNF
  done
  echo "$NODES" >"$TMP/nodes"
  if [ -n "$USER_LINE" ]; then chown -R mysql: "$TMP"/node*; fi
}
write_configs

log "initialising node 1's data directory"
if ! "$INSTALL_DB" --defaults-file="$TMP/node1/my.cnf" --auth-root-authentication-method=normal \
  --skip-test-db --wsrep-on=OFF >"$TMP/install-db.log" 2>&1; then
  tail -n 40 "$TMP/install-db.log" >&2 || true
  die "$INSTALL_DB failed"
fi

# --- 4. start the cluster ------------------------------------------------------------------
ctl start 1 --new-cluster || die "node 1 did not bootstrap the cluster"
PASSWORD="$(node -e "console.log(require('crypto').randomBytes(18).toString('hex'))")"
ctl sql 1 <<SQL
CREATE USER 'iam'@'127.0.0.1' IDENTIFIED BY '$PASSWORD';
GRANT ALL PRIVILEGES ON *.* TO 'iam'@'127.0.0.1';
CREATE DATABASE iam CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
SQL
# Nodes 2 and 3 start from a copy of node 1's data, taken while it is stopped cleanly, so they
# join at the cluster's current position with nothing to transfer; a full state transfer with
# rsync's SST script takes some 15 s per node here. Node 1 then bootstraps again from the same
# position (a clean shutdown marks it safe_to_bootstrap).
ctl stop 1
for ((n = 2; n <= NODES; n++)); do
  (cd "$TMP/node1/data" && tar --exclude=./galera.cache --exclude=./mariadbd.pid -cf - .) | (cd "$TMP/node$n/data" && tar -xpf -)
  sed -i 's/^safe_to_bootstrap: *1/safe_to_bootstrap: 0/' "$TMP/node$n/data/grastate.dat"
done
ctl start 1 --new-cluster || die "node 1 did not bootstrap the cluster again"
pids=()
for ((n = 2; n <= NODES; n++)); do
  ctl start "$n" &
  pids+=($!)
done
for ((n = 2; n <= NODES; n++)); do
  wait "${pids[n - 2]}" || die "node $n did not join the cluster"
done
size="$(ctl sql 1 -N -B -e "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)"
[ "$size" = "$NODES" ] || die "cluster size is '$size', expected $NODES"
log "cluster of $size nodes up after $((SECONDS - LANE_START)) s"

# --- 5. run the tests ----------------------------------------------------------------------
URLS=""
for ((n = 1; n <= NODES; n++)); do
  URLS+="${URLS:+,}mysql://iam:$PASSWORD@127.0.0.1:$(cat "$TMP/node$n/port")/iam"
done
printf '#!/usr/bin/env bash\nexec bash %q %q "$@"\n' "$CTL_SCRIPT" "$TMP" >"$TMP/ctl"
chmod +x "$TMP/ctl"
export IAM_GALERA_URLS="$URLS" IAM_GALERA_CTL="$TMP/ctl"
export IAM_TEST_DATABASE_URL="${URLS%%,*}"
log "IAM_GALERA_URLS=${URLS//$PASSWORD/***}"

# In the background and waited for, so that a signal to this script runs its trap at once
# (bash defers traps until a foreground child exits), and in a process group of its own
# (setsid), which the cleanup stops as a whole.
rc=0
if [ -n "${GALERA_LANE_CMD:-}" ]; then
  log "running GALERA_LANE_CMD: $GALERA_LANE_CMD"
  setsid bash -c "$GALERA_LANE_CMD" galera-lane "$@" &
else
  log "running: npx ava --config ava.galera.config.js $*"
  setsid npx ava --config ava.galera.config.js "$@" &
fi
CHILD_PID=$!
wait "$CHILD_PID" || rc=$?
CHILD_PID=""
log "tests exited with $rc after $((SECONDS - LANE_START)) s of lane"
exit "$rc"
