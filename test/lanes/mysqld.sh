# Sourced by the MariaDB and Galera lane scripts (which define log and die): what both need to
# find, install and stop a private mariadbd.
#
#   ensure_mariadbd            installs mariadb-server when mariadbd is missing
#   first_cmd CMD...           prints the first of the given commands that exists
#   free_port                  prints a TCP port on 127.0.0.1 that was free a moment ago
#   stop_pid PID [SECONDS]     SIGTERM, then SIGKILL when PID has not exited within SECONDS (30)

# mariadbd and friends live in /usr/sbin on Debian, which a non-root PATH may lack.
PATH="$PATH:/usr/sbin:/usr/local/sbin"

ensure_mariadbd() {
  if ! command -v mariadbd >/dev/null 2>&1; then
    apt_install mariadbd mariadb-server
    command -v mariadbd >/dev/null 2>&1 || die "mariadb-server installed but mariadbd is still not on PATH"
  fi
}

first_cmd() {
  local c
  for c in "$@"; do
    if command -v "$c" >/dev/null 2>&1; then echo "$c"; return 0; fi
  done
  return 1
}

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# Works for a process that is not our child too (a node restarted by the Galera control script):
# `wait` only reaps our own, so the loop polls with kill -0.
stop_pid() {
  local pid="$1" secs="${2:-30}" i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "pid $pid did not stop in ${secs} s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  wait "$pid" 2>/dev/null || true
}
