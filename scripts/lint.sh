#!/usr/bin/env bash
# ansible-lint (production profile, no skips) over the whole collection.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"
ansible-lint --profile production
