#!/usr/bin/env bash
# The audit's metrics and the alerting rules through Debian's promtool
# (tests/monitoring): check metrics on the written files, check rules, and test
# rules. Extra arguments go to pytest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

require_command promtool "Install promtool: apt-get install prometheus (or run: make deps)."
activate_venv
cd "${REPO_ROOT}"
python -m pytest -q -p no:cacheprovider tests/monitoring "$@"
