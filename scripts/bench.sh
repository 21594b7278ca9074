#!/usr/bin/env bash
# `make bench`: starts BENCH_NODES lab containers, times the floor, the first
# converge and the no-op re-converge of the host roles, and saves the table to
# bench/results/. The containers are removed afterwards.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

nodes="${BENCH_NODES:-8}"
prefix="gpuops-bench"
inventory="${STATE_DIR}/bench/inventory.yml"
lab_up

cleanup() {
  local rc=$?
  for i in $(seq 1 "${nodes}"); do docker rm -f "${prefix}-${i}" >/dev/null 2>&1 || true; done
  lab_engine_release
  exit "${rc}"
}
trap cleanup EXIT

mkdir -p "$(dirname "${inventory}")"
{
  echo "gpu_nodes:"
  echo "  vars: {ansible_connection: community.docker.docker, ansible_python_interpreter: /usr/bin/python3}"
  echo "  hosts:"
} >"${inventory}"
for i in $(seq 1 "${nodes}"); do
  docker rm -f "${prefix}-${i}" >/dev/null 2>&1 || true
  docker run -d --name "${prefix}-${i}" --hostname "${prefix}-${i}" --network none \
    --cap-add SYS_ADMIN --security-opt seccomp=unconfined --cgroupns=host \
    -v /sys/fs/cgroup:/sys/fs/cgroup:rw --tmpfs /run --tmpfs /run/lock \
    gpuops-lab/debian12:lab >/dev/null
  profile=training
  [ $((i % 2)) -eq 0 ] && profile=inference
  echo "    ${prefix}-${i}: {gpuops_profile: ${profile}}" >>"${inventory}"
done
for i in $(seq 1 "${nodes}"); do
  for _ in $(seq 1 30); do
    state="$(docker exec "${prefix}-${i}" systemctl is-system-running 2>/dev/null || true)"
    case "${state}" in running|degraded) break ;; esac
    sleep 1
  done
done

log "Benchmarking on ${nodes} nodes"
python scripts/bench.py "${inventory}" "${nodes}" bench/results
