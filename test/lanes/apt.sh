# Sourced by the lane scripts (which define log and die): installs Debian packages a lane
# needs when they are missing, as root or through sudo.
#
#   apt_install "<what is missing, for messages>" package...
apt_install() {
  local what="$1"; shift
  log "$what not found; installing $* with apt-get"
  command -v apt-get >/dev/null 2>&1 || die "$what is missing and apt-get is not available; install $* yourself"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "$what is missing and this is not root (and no sudo)"
    sudo=(sudo)
  fi
  # .ci/run runs some lanes side by side: one lane's apt-get waits for the other's to finish
  # with the package database instead of failing at once on its lock.
  local wait=(-o DPkg::Lock::Timeout=600)
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" update -q
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -q --no-install-recommends "$@"
}
