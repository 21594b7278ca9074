#!/usr/bin/env bash
# Starts a Docker engine for the lab when none answers. The engine runs with no
# bridge and no iptables rules: lab containers use network_mode none and are
# reached through `docker exec`. Writes .lab/dockerd.pid only when it started one,
# so docker-down.sh leaves an engine it did not start alone.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

mkdir -p "${STATE_DIR}"
require_command docker "Install it with: apt-get install docker.io (or run: make deps)"

if docker info >/dev/null 2>&1; then
  log "Docker engine already running; using it"
else
  require_root "Starting the Docker engine"
  require_command dockerd "Install it with: apt-get install docker.io (or run: make deps)"
  log "Starting the Docker engine (no bridge, no iptables)"
  # The engine outlives this script: it closes every descriptor it inherits above
  # stderr first, or a lock its caller holds (`flock LOCK make ee`) stays held as long
  # as the engine runs.
  # shellcheck disable=SC2016
  setsid bash -c 'for fd in /proc/self/fd/*; do fd="${fd##*/}"; [ "${fd}" -gt 2 ] && eval "exec ${fd}>&-"; done
    exec dockerd --bridge=none --iptables=false --ip-masq=false --ip-forward=false' \
    >"${STATE_DIR}/dockerd.log" 2>&1 < /dev/null &
  echo $! >"${STATE_DIR}/dockerd.pid"
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || die "The Docker engine did not start; see ${STATE_DIR}/dockerd.log"
fi

# systemd containers each take inotify instances; the default of 128 caps a lab near 25 nodes.
current="$(cat /proc/sys/fs/inotify/max_user_instances 2>/dev/null || echo 0)"
if [ "${current}" -lt 1024 ] && [ "$(id -u)" -eq 0 ]; then
  sysctl -q -w fs.inotify.max_user_instances=1024 || warn "could not raise fs.inotify.max_user_instances"
fi
