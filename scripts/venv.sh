#!/usr/bin/env bash
# Creates .venv with the pinned Python tooling; reinstalls only when
# requirements.txt changes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

python="${PYTHON:-python3}"
require_command "${python}" "Install Python 3.11 or newer (apt-get install python3 python3-venv)."
"${python}" - <<'PY' || die "Python 3.11 or newer is required for ansible-core 2.19 (found $(${python} -V 2>&1))."
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

stamp="${VENV}/.requirements-$(content_hash "${REPO_ROOT}/requirements.txt")"
if [ -f "${stamp}" ]; then
  exit 0
fi
log "Creating the virtualenv ${VENV}"
[ -d "${VENV}" ] || "${python}" -m venv "${VENV}" || die "Could not create a virtualenv; install python3-venv."
"${VENV}/bin/pip" install -q --upgrade pip >/dev/null
"${VENV}/bin/pip" install -q -r "${REPO_ROOT}/requirements.txt"
rm -f "${VENV}"/.requirements-*
touch "${stamp}"
