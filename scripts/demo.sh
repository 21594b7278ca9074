#!/usr/bin/env bash
# `make demo`: builds the container lab (emulated GPUs included), runs
# `playbooks/site.yml -l gpu_nodes` against it, then audits every node, times its
# host-GPU path (playbooks/baseline.yml) and prints the paths of the HTML
# reports. KEEP_LAB=1 leaves the lab running.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "${REPO_ROOT}"

scripts/preflight.sh demo
scripts/install-deps.sh demo
scripts/venv.sh
activate_venv

lab_up

cleanup() {
  local rc=$?
  if [ "${KEEP_LAB:-0}" = "1" ] && [ "${rc}" -eq 0 ]; then
    log "The lab is still running (KEEP_LAB=1). Explore it with: docker exec -it gpu-train bash"
    log "Run the playbooks again with: source .venv/bin/activate && ansible-playbook -i inventory/lab.yml playbooks/site.yml -l gpu_nodes"
    log "Remove it with: source .venv/bin/activate && molecule destroy -s default && scripts/lab/docker-down.sh"
    exit 0
  fi
  molecule destroy -s default >/dev/null 2>&1 || warn "molecule destroy failed"
  lab_engine_release
  exit "${rc}"
}
trap cleanup EXIT

log "Creating the lab nodes"
molecule create -s default >"${STATE_DIR}/demo-create.log" 2>&1 || { tail -n 40 "${STATE_DIR}/demo-create.log"; die "molecule create failed"; }
molecule prepare -s default >"${STATE_DIR}/demo-prepare.log" 2>&1 || { tail -n 40 "${STATE_DIR}/demo-prepare.log"; die "molecule prepare failed"; }

log "ansible-playbook playbooks/site.yml -i inventory/lab.yml -l gpu_nodes"
ansible-playbook playbooks/site.yml -i inventory/lab.yml -l gpu_nodes

# The lab keeps what prepare left wrong on purpose (gpu-infer's local sysctl file,
# gpu-train's driver too old for CUDA 13): the report shows them as FAIL.
report_dir="${STATE_DIR}/demo-audit"
log "Auditing every node (playbooks/audit.yml, check mode: it changes nothing)"
ansible-playbook playbooks/audit.yml -i inventory/lab.yml -l gpu_nodes -e "audit_report_dir=${report_dir}"
log "The fleet report: ${report_dir}/fleet.html (one file, works offline); per node: ${report_dir}/nodes/"

# There is no CUDA driver in a container: every figure is a SKIP that says so.
baseline_dir="${STATE_DIR}/demo-baseline"
log "Timing the host-GPU path (playbooks/baseline.yml; the lab has no libcuda.so.1, so each figure is a SKIP with the reason)"
ansible-playbook playbooks/baseline.yml -i inventory/lab.yml -l gpu_nodes -e "baseline_report_dir=${baseline_dir}"
log "The baseline report: ${baseline_dir}/fleet.html; per node: ${baseline_dir}/nodes/"
