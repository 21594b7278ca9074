#!/usr/bin/env bash
# Everything the container lab needs before `molecule create`: the Docker
# engine, the locally built image, and a fake sysfs tree for each GPU profile
# that inventory/lab.yml gives a node (bind-mounted by molecule/default).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

"${REPO_ROOT}/scripts/lab/docker-up.sh"
"${REPO_ROOT}/scripts/lab/build-image.sh"

# ansible-inventory resolves group and host vars as the playbooks see them.
profiles="$("${VENV}/bin/ansible-inventory" -i "${REPO_ROOT}/inventory/lab.yml" --list | "${VENV}/bin/python" -c '
import json, sys
hostvars = json.load(sys.stdin)["_meta"]["hostvars"].values()
print(" ".join(sorted({v["gpuops_gpu_profile"] for v in hostvars if "gpuops_gpu_profile" in v})))
')"
for profile in ${profiles}; do
  out="${STATE_DIR}/sysfs/${profile}"
  rm -rf "${out}"
  mkdir -p "${out}"
  (cd "${REPO_ROOT}/tests/gpu_emulator" && python3 -m gpuemu sysfs --profile "${profile}" --out "${out}" >/dev/null)
done
log "Fake sysfs trees ready for: ${profiles}"
