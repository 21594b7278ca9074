#!/usr/bin/env bash
# ansible-lint (production profile, no skips) over the whole collection, then
# the awx.awx tasks' arguments, which ansible-lint does not check.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"
ansible-lint --profile production
python scripts/check_awx_task_args.py playbooks/awx/configure.yml
