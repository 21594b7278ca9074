#!/usr/bin/env bash
# Everything the container lab needs before `molecule create`: the Docker
# engine, the locally built image, and a fake sysfs tree for each GPU profile
# that inventory/lab.yml gives a node (bind-mounted by molecule/default).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

"${REPO_ROOT}/scripts/lab/docker-up.sh"
"${REPO_ROOT}/scripts/lab/build-image.sh"

profiles="$("${VENV}/bin/python" - "${REPO_ROOT}/inventory/lab.yml" <<'PY'
import sys
import yaml

def walk(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "gpuops_gpu_profile":
                yield value
            else:
                yield from walk(value)

with open(sys.argv[1], encoding="utf-8") as handle:
    print(" ".join(sorted(set(walk(yaml.safe_load(handle))))))
PY
)"
for profile in ${profiles}; do
  out="${STATE_DIR}/sysfs/${profile}"
  rm -rf "${out}"
  mkdir -p "${out}"
  (cd "${REPO_ROOT}/tests/gpu_emulator" && python3 -m gpuemu sysfs --profile "${profile}" --out "${out}" >/dev/null)
done
log "Fake sysfs trees ready for: ${profiles}"
