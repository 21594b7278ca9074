#!/usr/bin/env bash
# Runs `ansible-test sanity|units` on a copy of the collection placed where
# ansible-test needs it: build/ansible_collections/gpuops/hardening.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv

suite="${1:?usage: ansible-test.sh sanity|units [extra ansible-test args]}"
shift
python_version="$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
collection_dir="${REPO_ROOT}/build/ansible_collections/gpuops/hardening"

# Copy exactly what git would ship: tracked files plus untracked, non-ignored ones.
rm -rf "${collection_dir}"
mkdir -p "${collection_dir}"
(cd "${REPO_ROOT}" && git ls-files -z --cached --others --exclude-standard \
  | xargs -0 -I{} sh -c 'test -e "{}" || test -L "{}" && printf "%s\0" "{}"' \
  | cpio --null -pdm --quiet "${collection_dir}")

# ansible-test fetches a pip bootstrap script from the internet for every venv it
# makes. Offline, it uses this cached file instead; our stand-in bootstraps pip
# from the interpreter's own ensurepip and then installs from the configured index.
cache="${HOME}/.ansible/test/cache"
mkdir -p "${cache}"
for name in get_pip_24_2.py get_pip_23_1_2.py get_pip.py; do
  cp "${REPO_ROOT}/scripts/get-pip-offline.py" "${cache}/${name}"
done

cd "${collection_dir}"
case "${suite}" in
  sanity) ansible-test sanity --venv --requirements --python "${python_version}" --color "$@" ;;
  units) ansible-test units --venv --requirements --python "${python_version}" --color "$@" ;;
  *) die "unknown suite ${suite}" ;;
esac
