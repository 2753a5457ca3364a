#!/usr/bin/env bash
# Controls the nodes of the Galera lane's cluster (test/lanes/galera.sh writes their config
# into its temp directory and hands the tests a wrapper in IAM_GALERA_CTL that calls this with
# that directory).
#
#   galera-ctl.sh DIR start N [--new-cluster]   start node N (1-3) and wait until it is Synced
#   galera-ctl.sh DIR kill N                    SIGKILL node N (a crash: no clean shutdown)
#   galera-ctl.sh DIR stop N                    SIGTERM node N and wait for it to exit
#   galera-ctl.sh DIR status [N]                "N <state> <cluster size>" for each (running) node
#   galera-ctl.sh DIR sql N [client args]       the mariadb client as root on node N's socket
#   galera-ctl.sh DIR stop-all                  stop every running node (the lane's cleanup)
#
# A node killed with SIGKILL is restarted from its own data: `start` first asks mariadbd for
# the last transaction InnoDB committed (--wsrep-recover, as mysqld_safe does) and passes it
# as --wsrep-start-position, so the node catches up with an incremental state transfer (IST)
# from a peer's gcache instead of copying the whole data directory again (a full SST with
# rsync would block the donor's writes while it runs).
#
# Knobs: GALERA_CTL_TIMEOUT (seconds a start may take to reach Synced, default 120).
set -euo pipefail

log() { printf '[galera-ctl %s] %s\n' "$(date -u +%T.%2N)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
PATH="$PATH:/usr/sbin:/usr/local/sbin"

DIR="${1:?usage: galera-ctl.sh DIR COMMAND [N]}"
CMD="${2:?usage: galera-ctl.sh DIR COMMAND [N]}"
shift 2
[ -f "$DIR/nodes" ] || die "$DIR is not a Galera lane directory (no nodes file)"
CLIENT="$(cat "$DIR/client")"
NODES="$(cat "$DIR/nodes")"

node_dir() {
  local n="$1"
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le "$NODES" ] || die "no node '$n' (1-$NODES)"
  echo "$DIR/node$n"
}
alive() { # a process that exited but was not reaped yet (a zombie) counts as gone
  kill -0 "$1" 2>/dev/null || return 1
  case "$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)" in
    Z | X | "") return 1 ;;
  esac
}
node_pid() { # the running mariadbd of node N, or nothing
  local d pid
  d="$(node_dir "$1")"
  [ -f "$d/pid" ] || return 0
  pid="$(cat "$d/pid")"
  if [ -n "$pid" ] && alive "$pid"; then echo "$pid"; fi
}
root_sql() { # root_sql N client-args...
  local d
  d="$(node_dir "$1")"
  shift
  "$CLIENT" --no-defaults --protocol=socket -S "$d/sock" -uroot "$@"
}
wsrep_status() { # wsrep_status N VAR: the value of SHOW STATUS LIKE 'VAR', or nothing
  root_sql "$1" -N -B -e "SHOW STATUS LIKE '$2'" 2>/dev/null | cut -f2
}

start_node() {
  local n="$1" new_cluster="${2:-}" d pid i pos="" extra=()
  d="$(node_dir "$n")"
  if [ -n "$(node_pid "$n")" ]; then
    log "node $n is already running"
    return 0
  fi
  if [ "$new_cluster" = --new-cluster ]; then
    extra+=(--wsrep-new-cluster)
  elif [ -f "$d/data/grastate.dat" ] && grep -q '^seqno: *-1' "$d/data/grastate.dat"; then
    # A crash leaves seqno -1 in grastate.dat: recover the position from InnoDB.
    if mariadbd --defaults-file="$d/my.cnf" --wsrep-recover --log-error="$d/recover.log" </dev/null >/dev/null 2>&1; then
      pos="$(sed -n 's/.*WSREP: Recovered position: *\([0-9a-f-]*:-\?[0-9]*\).*/\1/p' "$d/recover.log" | tail -n 1)"
    fi
    if [ -n "$pos" ]; then
      log "node $n recovered position $pos"
      extra+=("--wsrep-start-position=$pos")
    else
      log "node $n: no position recovered; it will take a full state transfer"
    fi
  fi
  log "starting node $n (port $(cat "$d/port"))"
  # setsid: the node outlives this script (a test calls it and goes on), and a Ctrl-C meant for
  # the test runner does not reach it; the lane's cleanup stops it by its pid file.
  # (A script's background job is no process group leader, so setsid execs mariadbd in place
  # and $! is the server's pid.)
  setsid mariadbd --defaults-file="$d/my.cnf" ${extra[@]+"${extra[@]}"} </dev/null >>"$d/err.log" 2>&1 &
  pid=$!
  echo "$pid" >"$d/pid"
  local timeout="${GALERA_CTL_TIMEOUT:-120}" state="" t0
  t0="$(date +%s%N)"
  for ((i = 0; $(date +%s%N) - t0 < timeout * 1000000000; i++)); do
    sleep 0.1
    if ! alive "$pid"; then
      log "node $n exited while starting; last lines of its log:"
      tail -n 40 "$d/err.log" >&2 || true
      return 1
    fi
    state="$(wsrep_status "$n" wsrep_local_state_comment || true)"
    if [ "$state" = Synced ] && [ "$(wsrep_status "$n" wsrep_ready)" = ON ]; then
      local ms=$((($(date +%s%N) - t0) / 1000000))
      log "node $n is Synced (cluster size $(wsrep_status "$n" wsrep_cluster_size), $((ms / 1000)).$(printf %03d $((ms % 1000))) s after its start)"
      return 0
    fi
  done
  log "node $n did not reach Synced in ${timeout} s (state '${state}'); last lines of its log:"
  tail -n 40 "$d/err.log" >&2 || true
  return 1
}

wait_gone() { # wait_gone PID SECONDS
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    alive "$1" || return 0
    sleep 0.1
  done
  return 1
}

kill_node() {
  local n="$1" pid
  pid="$(node_pid "$n")"
  [ -n "$pid" ] || { log "node $n is not running"; return 0; }
  log "killing node $n (pid $pid, SIGKILL)"
  kill -KILL "$pid" 2>/dev/null || true
  wait_gone "$pid" 10 || die "node $n (pid $pid) still there after SIGKILL"
}

stop_node() {
  local n="$1" pid
  pid="$(node_pid "$n")"
  [ -n "$pid" ] || return 0
  log "stopping node $n (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" 30; then
    log "node $n did not stop in 30 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 10 || true
  fi
}

case "$CMD" in
  start) start_node "${1:?node number}" "${2:-}" ;;
  kill) kill_node "${1:?node number}" ;;
  stop) stop_node "${1:?node number}" ;;
  stop-all)
    # The last node standing stops last, so that the others leave the cluster cleanly.
    for ((n = NODES; n >= 1; n--)); do stop_node "$n"; done
    ;;
  status)
    for n in ${1:-$(seq 1 "$NODES")}; do
      if [ -n "$(node_pid "$n")" ]; then
        echo "$n $(wsrep_status "$n" wsrep_local_state_comment) $(wsrep_status "$n" wsrep_cluster_size)"
      else
        echo "$n down 0"
      fi
    done
    ;;
  sql)
    n="${1:?node number}"
    shift
    root_sql "$n" "$@"
    ;;
  *) die "unknown command '$CMD' (start, kill, stop, stop-all, status, sql)" ;;
esac
