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
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -q
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}
