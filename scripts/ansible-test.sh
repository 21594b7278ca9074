#!/usr/bin/env bash
# Runs `ansible-test sanity|units` on a copy of the collection placed where
# ansible-test needs it: build/ansible_collections/gpuops/hardening.
#   ansible-test.sh sanity|units [ARGS]            the host venv: the oldest supported
#                                                  ansible-core (2.19, Python 3.11)
#   ansible-test.sh --newest sanity|units [ARGS]   inside the execution environment
#                                                  image (scripts/ee-build.sh): the newest
#                                                  (2.21, Python 3.13)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv

image=""
if [ "${1:-}" = "--newest" ]; then
  shift
  docker info >/dev/null 2>&1 || LAB_STARTED_ENGINE=1
  trap lab_engine_release EXIT
  image="$("${REPO_ROOT}/scripts/ee-build.sh")"
fi
suite="${1:?usage: ansible-test.sh [--newest] sanity|units [extra ansible-test args]}"
shift
version_of_python='import sys; print("%d.%d" % sys.version_info[:2])'
if [ -n "${image}" ]; then
  python_version="$(docker run --rm --network none "${image}" python3 -c "${version_of_python}")"
else
  python_version="$(python -c "${version_of_python}")"
fi
# Outside the checkout: inside it, ansible-test would ask git for the file list
# and find the (ignored) copy empty.
build_root="${GPUOPS_BUILD_DIR:-${CACHE_DIR}/ansible-test/$(printf '%s' "${REPO_ROOT}${image:+ (newest)}" | sha256sum | cut -c1-12)}"
collection_dir="${build_root}/ansible_collections/gpuops/hardening"

# Copy exactly what git would ship: tracked files plus untracked, non-ignored ones.
rm -rf "${collection_dir}"
mkdir -p "${collection_dir}"
(cd "${REPO_ROOT}" && git ls-files -z --cached --others --exclude-standard \
  | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) | tar -C "${collection_dir}" -xf -

# ansible-test fetches a pip bootstrap script from the internet for every venv it
# makes. Offline, it uses this cached file instead; our stand-in bootstraps pip
# from the interpreter's own ensurepip and then installs from the configured index.
# In the image, ~/.ansible is a cache folder of the host's (its venvs survive the run).
ansible_home="${HOME}/.ansible"
[ -z "${image}" ] || ansible_home="${CACHE_DIR}/ansible-test-home/${python_version}"
cache="${ansible_home}/test/cache"
mkdir -p "${cache}"
for name in get_pip_25_2.py get_pip_24_2.py get_pip_23_1_2.py get_pip.py; do
  cp "${REPO_ROOT}/scripts/get-pip-offline.py" "${cache}/${name}"
done

# The copy no longer sits beside ../shared, so tell the tests where the real captures are.
if [ -z "${GPUOPS_REAL_FIXTURES:-}" ] && [ -d "${REPO_ROOT}/../shared/fixtures/real" ]; then
  GPUOPS_REAL_FIXTURES="$(cd "${REPO_ROOT}/../shared/fixtures/real" && pwd)"
  export GPUOPS_REAL_FIXTURES
fi
if [ -n "${CI:-}" ] && [ ! -d "${GPUOPS_REAL_FIXTURES:-/nonexistent}" ]; then
  die "CI is set but the real captures are missing: expected ${REPO_ROOT}/../shared/fixtures/real"
fi

python - "${collection_dir}/tests/unit/.run-settings.json" <<'PY'
import json, os, sys
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    json.dump({"real_fixtures": os.environ.get("GPUOPS_REAL_FIXTURES"), "ci": bool(os.environ.get("CI"))}, handle)
PY

case "${suite}" in
  sanity | units) ;;
  *) die "unknown suite ${suite}" ;;
esac
run=()
if [ -n "${image}" ]; then
  # The host's network, for the test venvs' pip installs from PyPI (nothing else
  # runs in that container); paths are mounted where they are on the host.
  run=(docker run --rm --user 0 --network host --workdir "${collection_dir}"
    --volume "${build_root}:${build_root}" --volume "${ansible_home}:/root/.ansible"
    --env CI --env PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
  if [ -n "${GPUOPS_REAL_FIXTURES:-}" ]; then
    run+=(--volume "${GPUOPS_REAL_FIXTURES}:${GPUOPS_REAL_FIXTURES}:ro")
  fi
  run+=("${image}")
fi
cd "${collection_dir}"
log "ansible-test ${suite} on $("${run[@]}" ansible-test --version 2>/dev/null || ansible --version | head -n 1), Python ${python_version}"
"${run[@]}" ansible-test "${suite}" --venv --requirements --python "${python_version}" --color yes "$@"
