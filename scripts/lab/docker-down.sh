#!/usr/bin/env bash
# Stops the Docker engine only if docker-up.sh started it.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

pidfile="${STATE_DIR}/dockerd.pid"
[ -f "${pidfile}" ] || exit 0
pid="$(cat "${pidfile}")"
if kill -0 "${pid}" 2>/dev/null; then
  log "Stopping the Docker engine this project started (pid ${pid})"
  kill "${pid}"
  for _ in $(seq 1 30); do
    kill -0 "${pid}" 2>/dev/null || break
    sleep 1
  done
  kill -9 "${pid}" 2>/dev/null || true
fi
rm -f "${pidfile}"
